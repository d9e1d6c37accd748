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
    A3,
    monthly_income,
    monthly_noncash_income,
    balance_cv
from {{ ref('int_banking_loan_risk') }}
