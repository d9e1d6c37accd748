-- a composite of one metric twice: the numerator is the order count of delivered orders only
{{ dptool.composite_metric(['order_count']) }}
