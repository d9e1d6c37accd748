{{ dptool.metric_variants('new_accounts', ['small_segment_suppression', 'minor_client_protection'], group_by=['A2', 'frequency']) }}
