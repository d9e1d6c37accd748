-- base and gold variants in one model: the caller's where applies to both, the rules (a where with
-- `or` and a column override, in order) to the gold variant only
{{ dptool.gold('sales', rules=['exclude_internal', 'returned_earn_nothing'], where=["status <> 'canceled'"], group_by=['region'], shape='grouped') }}
