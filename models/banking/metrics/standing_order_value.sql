select
    order_id,
    account_id,
    bank_to,
    amount,
    k_symbol,
    date,
    frequency,
    A2,
    A3
from {{ ref('int_banking_orders') }}
