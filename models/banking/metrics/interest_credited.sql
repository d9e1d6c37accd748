select
    trans_id,
    account_id,
    date,
    amount,
    balance,
    frequency,
    A2,
    A3,
    days_since_opening
from {{ ref('int_banking_transactions') }}
where k_symbol = 'UROK'
