{{ dptool.metric_variants('cards_issued', ['junior_card_age_limit'], group_by=['type']) }}
