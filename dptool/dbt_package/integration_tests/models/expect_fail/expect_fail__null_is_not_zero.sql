-- NEGATIVE PROOF: the expected seed has 0 where the model has NULL (centre)
{{ dptool.metric_query('sales', group_by=['region'], shape='grouped') }}
