-- One row per loan: its terms and status, whether it went bad, and the account and district it was granted in.
select
    l.loan_id,
    l.account_id,
    l.amount,
    l.duration,
    l.payments,
    l.status,
    a.frequency,
    d.A2 as district_name,
    d.A3 as region,
    {{ banking_yymmdd_to_date('l.date') }} as loan_date,
    extract(year from {{ banking_yymmdd_to_date('l.date') }}) as loan_year,
    case when l.status in ('B', 'D') then 1 else 0 end as is_in_default,
    case when l.status in ('A', 'B') then 1 else 0 end as is_finished,
    l.payments / nullif(d.A11, 0) as payment_to_district_salary
from {{ ref('loan') }} as l
inner join {{ ref('account') }} as a on a.account_id = l.account_id
inner join {{ ref('district') }} as d on d.A1 = a.district_id
