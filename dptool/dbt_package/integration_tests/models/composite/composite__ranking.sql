-- a ranking of a composite: east and south tie at 75.0, the group breaks the tie
{{ dptool.metric_query('sales_per_order', rules={'sales': ['exclude_internal'], 'order_count': []}, group_by=['region'], shape='ranking', k=2) }}
