-- rules as a list name no component: dbt never saw a ref to Sales or the Order Count, and the compile must
-- say what to add rather than fail inside dbt
{{ dptool.metric_query('sales_per_order', rules=[]) }}
