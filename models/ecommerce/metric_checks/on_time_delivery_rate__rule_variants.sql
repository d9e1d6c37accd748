{{ dptool.metric_variants('on_time_delivery_rate', ['delivery_sla_grace_period']) }}
