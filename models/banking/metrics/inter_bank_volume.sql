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
    case when bank is not null and trim(bank) <> '' then 1.0 else 0.0 end as inter_bank_flag
from {{ ref('int_banking_transactions') }}
