-- NEGATIVE PROOF: exclude_future_orders changes nothing on this data, so rule_changes_answer must fail
-- for that variant (and for it only: exclude_internal does change the answer)
{{ dptool.metric_variants('sales', ['exclude_internal', 'exclude_future_orders']) }}
