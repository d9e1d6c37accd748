-- One row per payment, with the order's purchase date: how customers pay and in how many installments.
select
    p.order_id,
    p.payment_sequential,
    p.payment_type,
    p.payment_installments,
    p.payment_value,
    case when p.payment_installments > 1 then 1 else 0 end as is_installment_plan,
    o.order_purchase_timestamp,
    {{ dbt.date_trunc('month', 'o.order_purchase_timestamp') }} as purchase_month
from {{ ref('order_payments') }} as p
inner join {{ ref('orders') }} as o on o.order_id = p.order_id
