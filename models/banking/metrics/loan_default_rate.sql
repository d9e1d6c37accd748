select
    loan_id,
    account_id,
    date,
    amount,
    duration,
    payments,
    status,
    frequency,
    A2,
    A3
from {{ ref('int_banking_loans') }}
