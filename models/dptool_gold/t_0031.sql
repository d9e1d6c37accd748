-- written by `dptool generate`; do not edit (the next run rewrites this folder)
{{ config(materialized='table', schema='dptool_gold', tags=['dptool_gold']) }}
{{ dptool.gold(metric="csat", rules=["csat_neutral_exclusion"], where=["order_purchase_timestamp >= CAST('2017-04-01 00:00:00' AS TIMESTAMP)", "order_purchase_timestamp < CAST('2017-07-01 00:00:00' AS TIMESTAMP)", "customer_state = 'SP'"], shape="value") }}
