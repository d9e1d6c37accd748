-- Cards with the disposition, client and account they were issued on, and the account's district.
select
    c.card_id,
    c.disp_id,
    dp.account_id,
    c.type,
    c.issued,
    {{ banking_yymmdd('c.issued') }} as issued_yymmdd,
    cl.birth_number,
    a.frequency,
    d.A2,
    d.A3
from {{ ref('card') }} as c
inner join {{ ref('disp') }} as dp on dp.disp_id = c.disp_id
inner join {{ ref('client') }} as cl on cl.client_id = dp.client_id
inner join {{ ref('account') }} as a on a.account_id = dp.account_id
inner join {{ ref('district') }} as d on d.A1 = a.district_id
