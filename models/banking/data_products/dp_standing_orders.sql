-- One row per standing order: what it pays for, to which bank, how much a month and a year, and the account
-- (statement frequency, district, whether it holds a loan) it is paid from.
select
    o.order_id,
    o.account_id,
    o.bank_to,
    o.account_to,
    o.amount,
    o.k_symbol,
    case o.k_symbol
        when 'SIPO' then 'household'
        when 'POJISTNE' then 'insurance'
        when 'LEASING' then 'leasing'
        when 'UVER' then 'loan'
        else 'other'
    end as purpose,
    12 * o.amount as yearly_amount,
    a.frequency,
    d.A2 as district_name,
    d.A3 as region,
    case when l.loan_id is not null then 1 else 0 end as account_has_loan
from {{ ref('order') }} as o
inner join {{ ref('account') }} as a on a.account_id = o.account_id
inner join {{ ref('district') }} as d on d.A1 = a.district_id
left join {{ ref('loan') }} as l on l.account_id = o.account_id
