-- KNOWN BUG (metric_query.sql): a rule that returns a new spec instead of changing q in place is
-- dropped. `set q = changed` inside the for loop is local to the loop (Jinja scoping), so the
-- rendered query keeps the original q: 700 (sum) instead of 70 (avg).
{{ dptool.metric_query('sales', rules=['average_order_value_as_new_spec']) }}
