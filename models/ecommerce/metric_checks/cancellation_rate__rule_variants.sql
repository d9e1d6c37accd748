{{ dptool.metric_variants('cancellation_rate', ['pending_order_exclusion', 'unavailable_cancellation_reclass']) }}
