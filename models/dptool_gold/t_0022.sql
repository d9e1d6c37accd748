-- written by `dptool generate`; do not edit (the next run rewrites this folder)
{{ config(materialized='table', schema='dptool_gold', tags=['dptool_gold']) }}
{{ dptool.gold(metric="gmv", rules=["revenue_recognition"], where=["order_purchase_timestamp >= CAST('2017-01-01 00:00:00' AS TIMESTAMP)", "order_purchase_timestamp < CAST('2017-07-01 00:00:00' AS TIMESTAMP)", "seller_state = 'SP'"], shape="value") }}
