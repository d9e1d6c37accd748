-- One row per account: how active it was over 1993-1998, summed from dp_account_months, with its statement
-- frequency and the district of its branch.
select
    a.account_id,
    a.frequency,
    d.A2 as district_name,
    d.A3 as region,
    {{ banking_yymmdd_to_date('a.date') }} as opened_on,
    coalesce(sum(m.transactions_count), 0) as transactions_count,
    coalesce(sum(m.credits_total), 0) as credits_total,
    coalesce(sum(m.debits_total), 0) as debits_total,
    count(m.month_start) as active_months,
    min(m.lowest_balance) as lowest_balance,
    case when min(m.lowest_balance) < 0 then 1 else 0 end as was_overdrawn
from {{ ref('account') }} as a
inner join {{ ref('district') }} as d on d.A1 = a.district_id
left join {{ ref('dp_account_months') }} as m on m.account_id = a.account_id
group by
    a.account_id,
    a.frequency,
    d.A2,
    d.A3,
    {{ banking_yymmdd_to_date('a.date') }}
