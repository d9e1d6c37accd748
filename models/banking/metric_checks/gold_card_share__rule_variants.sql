{{ dptool.metric_variants('gold_card_share', ['junior_card_age_limit']) }}
