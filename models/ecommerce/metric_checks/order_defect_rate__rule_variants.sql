{{ dptool.metric_variants('order_defect_rate', ['pending_order_exclusion', 'unavailable_cancellation_reclass']) }}
