select
    order_id,
    account_id,
    bank_to,
    amount,
    k_symbol,
    date,
    frequency,
    A2,
    A3,
    case when k_symbol = 'SIPO' then amount else 0 end as household_amount
from {{ ref('int_banking_orders') }}
