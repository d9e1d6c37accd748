-- shape 'value': one row; sum() skips the NULL amounts and counts the refund
{{ dptool.metric_query('sales') }}
