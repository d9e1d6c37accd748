-- written by `dptool generate`; do not edit (the next run rewrites this folder)
{{ config(materialized='table', schema='dptool_gold', tags=['dptool_gold']) }}
{{ dptool.gold(metric="on_time_delivery_rate", rules=["delivery_sla_grace_period"], where=["order_purchase_timestamp >= CAST('2018-07-01 00:00:00' AS TIMESTAMP)", "order_purchase_timestamp < CAST('2018-10-01 00:00:00' AS TIMESTAMP)", "customer_city = 'porto alegre'"], shape="value") }}
