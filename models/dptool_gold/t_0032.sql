-- written by `dptool generate`; do not edit (the next run rewrites this folder)
{{ config(materialized='table', schema='dptool_gold', tags=['dptool_gold']) }}
{{ dptool.gold(metric="csat", rules=["csat_neutral_exclusion"], where=["order_purchase_timestamp >= CAST('2018-01-01 00:00:00' AS TIMESTAMP)", "order_purchase_timestamp < CAST('2018-07-01 00:00:00' AS TIMESTAMP)"], group_by=["customer_state"], shape="ranking", k=5) }}
