-- written by `dptool generate`; do not edit (the next run rewrites this folder)
{{ config(materialized='table', schema='dptool_gold', tags=['dptool_gold']) }}
{{ dptool.gold(metric="avg_review_score", rules=["review_privacy_quarantine"], where=["order_purchase_timestamp >= CAST('2017-10-01 00:00:00' AS TIMESTAMP)", "order_purchase_timestamp < CAST('2018-01-01 00:00:00' AS TIMESTAMP)", "customer_city = 'porto alegre'"], shape="value") }}
