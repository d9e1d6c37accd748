-- a rule overrides the row-level column `amount` through q.columns: returned orders (the refund too) count 0
{{ dptool.metric_query('sales', rules=['returned_earn_nothing'], group_by=['region'], shape='grouped') }}
