{{ dptool.metric_variants('card_penetration_rate', ['small_segment_suppression', 'card_eligibility_definition', 'minor_client_protection'], group_by=['A2', 'frequency']) }}
