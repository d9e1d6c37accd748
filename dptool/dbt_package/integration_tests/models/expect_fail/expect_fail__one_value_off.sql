-- NEGATIVE PROOF: the expected seed differs by one value (west: 100.01 instead of 100)
{{ dptool.metric_query('sales', group_by=['region'], shape='grouped') }}
