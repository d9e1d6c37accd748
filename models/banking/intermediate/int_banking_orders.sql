-- Standing orders (permanent payment orders) with the paying account and its district.
select
    o.order_id,
    o.account_id,
    o.bank_to,
    o.amount,
    o.k_symbol,
    a.date,
    a.frequency,
    d.A2,
    d.A3
from {{ ref('order') }} as o
inner join {{ ref('account') }} as a on a.account_id = o.account_id
inner join {{ ref('district') }} as d on d.A1 = a.district_id
