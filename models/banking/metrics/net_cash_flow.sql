select
    trans_id,
    account_id,
    date,
    type,
    operation,
    k_symbol,
    bank,
    amount,
    balance,
    frequency,
    A2,
    A3,
    days_since_opening,
    case when type = 'PRIJEM' then amount else -amount end as signed_amount
from {{ ref('int_banking_transactions') }}
