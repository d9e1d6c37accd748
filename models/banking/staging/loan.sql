select
    loan_id,
    account_id,
    date,
    amount,
    duration,
    payments,
    status
from {{ ref('berka_loan') }}
