-- NEGATIVE PROOF: the expected seed has the same rows, one of them twice; equality counts duplicates
{{ dptool.metric_query('sales', group_by=['region'], shape='grouped') }}
