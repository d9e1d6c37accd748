select
    l.loan_id,
    l.account_id,
    l.date,
    l.amount,
    l.duration,
    l.payments,
    l.status,
    l.frequency,
    l.A2,
    l.A3,
    owners.birth_number,
    l.date as reference_yymmdd,
    {{ banking_age_years(banking_birth_number('owners.birth_number'), 'l.date') }} as age_years
from {{ ref('int_banking_loans') }} as l
inner join {{ ref('int_banking_account_owners') }} as owners on owners.account_id = l.account_id
