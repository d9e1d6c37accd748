-- One row per paid order, summed from dp_payments: the second model of the payment-behaviour product.
select
    order_id,
    min(order_purchase_timestamp) as order_purchase_timestamp,
    count(*) as payments_count,
    sum(payment_value) as payment_total,
    max(payment_installments) as max_installments,
    max(case when payment_type = 'voucher' then 1 else 0 end) as used_voucher
from {{ ref('dp_payments') }}
group by order_id
