-- shape 'ranking' with k above the number of groups: every group, ties by key, the NULL value last
{{ dptool.metric_query('sales', group_by=['region'], shape='ranking', k=10) }}
