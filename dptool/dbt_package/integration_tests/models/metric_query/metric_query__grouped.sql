-- shape 'grouped': one row per region; a region whose amounts are all NULL has a NULL value
{{ dptool.metric_query('sales', group_by=['region'], shape='grouped') }}
