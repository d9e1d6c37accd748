-- a component's rule applies to that component only: staff purchases leave Sales, not the Order Count
-- (one query over one model with the rule's where would divide by 2 orders in north, not 3)
{{ dptool.metric_query('sales_per_order', rules={'sales_per_order': [], 'sales': ['exclude_internal'], 'order_count': []}, group_by=['region'], shape='grouped') }}
