{{ dptool.metric_variants('cards_issued', ['junior_card_age_limit', 'minor_client_protection'], group_by=['type']) }}
