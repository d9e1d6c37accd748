-- shape 'ranking' with k=2: east and north tie at 150 for rank 2; the group key breaks the tie (east)
{{ dptool.metric_query('sales', group_by=['region'], shape='ranking', k=2) }}
