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
    case when k_symbol = 'SLUZBY' then amount else 0 end as fee_amount
from {{ ref('int_banking_transactions') }}
where k_symbol in ('SLUZBY', 'SANKC. UROK')
