{{ dptool.metric_variants('avg_installments', ['credit_card_installment_cap']) }}
