-- the composite's own rules reach every component: a where leaves both, a column redefinition reaches the
-- components that document the column (Sales' amount; the Order Count has none)
{{ dptool.metric_query('sales_per_order', rules={'sales_per_order': ['exclude_internal', 'returned_earn_nothing'], 'sales': [], 'order_count': []}, group_by=['region'], shape='grouped') }}
