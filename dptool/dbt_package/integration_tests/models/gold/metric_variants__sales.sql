-- the overall value without rules (base) and under each rule on its own: a where, a column override
-- and a replaced value
{{ dptool.metric_variants('sales', ['exclude_internal', 'returned_earn_nothing', 'average_order_value']) }}
