{{ dptool.metric_variants('clv', ['customer_deduplication', 'clv_lifespan']) }}
