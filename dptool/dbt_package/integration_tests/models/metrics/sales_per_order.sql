-- a composite: computed per group from its components, each under its own rules
{{ dptool.composite_metric(['sales', 'order_count']) }}
