-- a rule adds a having predicate: only the regions with three orders or more
{{ dptool.metric_query('sales', rules=['regions_with_three_orders'], group_by=['region'], shape='grouped') }}
