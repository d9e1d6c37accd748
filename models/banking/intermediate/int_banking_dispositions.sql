-- Dispositions (a client's right on an account: OWNER or DISPONENT) with the client, the account and the
-- district of the account's branch.
select
    dp.disp_id,
    dp.client_id,
    dp.account_id,
    dp.type,
    c.birth_number,
    a.date,
    a.frequency,
    d.A2,
    d.A3
from {{ ref('disp') }} as dp
inner join {{ ref('client') }} as c on c.client_id = dp.client_id
inner join {{ ref('account') }} as a on a.account_id = dp.account_id
inner join {{ ref('district') }} as d on d.A1 = a.district_id
