select
    trans_id,
    account_id,
    date,
    type,
    operation,
    amount,
    balance,
    k_symbol,
    bank,
    account
from {{ ref('berka_trans') }}
