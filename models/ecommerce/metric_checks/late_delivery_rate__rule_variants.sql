{{ dptool.metric_variants('late_delivery_rate', ['delivery_sla_grace_period']) }}
