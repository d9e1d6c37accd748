-- an input with its own filter (delivered orders) and a rule of the metric it reads: a group needs three
-- delivered orders and three orders; only south has both
{{ dptool.metric_query('delivered_share', rules={'order_count': ['regions_with_three_orders']}, group_by=['region'], shape='grouped') }}
