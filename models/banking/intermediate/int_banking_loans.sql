-- Loans with their account (statement frequency) and the district of the account's branch.
select
    l.loan_id,
    l.account_id,
    l.date,
    l.amount,
    l.duration,
    l.payments,
    l.status,
    a.frequency,
    d.A2,
    d.A3,
    d.A11
from {{ ref('loan') }} as l
inner join {{ ref('account') }} as a on a.account_id = l.account_id
inner join {{ ref('district') }} as d on d.A1 = a.district_id
