-- caller `where` predicates, all of them applied; two group_by columns; a group key with an apostrophe
{{ dptool.metric_query('sales', where=["status = 'delivered'", 'amount > 0'], group_by=['region', 'city'], shape='grouped') }}
