-- One row per district: who lives there (population, salary, unemployment, crime) and how much the bank does
-- there (accounts at its branches, clients living there, loans granted and how many went bad).
with accounts as (
    select a.district_id, count(*) as accounts_count
    from {{ ref('account') }} as a
    group by a.district_id
),

clients as (
    select c.district_id, count(*) as clients_count
    from {{ ref('client') }} as c
    group by c.district_id
),

loans as (
    select
        a.district_id,
        count(*) as loans_count,
        sum(l.amount) as loan_volume,
        avg(case when l.status in ('B', 'D') then 1.0 else 0.0 end) as bad_loan_share
    from {{ ref('loan') }} as l
    inner join {{ ref('account') }} as a on a.account_id = l.account_id
    group by a.district_id
)

select
    d.A1 as district_id,
    d.A2 as district_name,
    d.A3 as region,
    d.A4 as inhabitants,
    d.A10 as urban_ratio,
    d.A11 as average_salary,
    d.A13 as unemployment_rate_1996,
    d.A16 as crimes_1996,
    1000.0 * d.A16 / nullif(d.A4, 0) as crimes_per_1000_inhabitants,
    coalesce(ac.accounts_count, 0) as accounts_count,
    coalesce(cl.clients_count, 0) as clients_count,
    coalesce(ln.loans_count, 0) as loans_count,
    coalesce(ln.loan_volume, 0) as loan_volume,
    ln.bad_loan_share
from {{ ref('district') }} as d
left join accounts as ac on ac.district_id = d.A1
left join clients as cl on cl.district_id = d.A1
left join loans as ln on ln.district_id = d.A1
