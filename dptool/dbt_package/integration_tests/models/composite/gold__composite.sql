-- a composite's gold and base side by side: the base without rules, the gold with Sales under its rule
{{ dptool.gold('sales_per_order', rules={'sales_per_order': [], 'sales': ['exclude_internal'], 'order_count': []}) }}
