-- The owner of each account (every account has exactly one OWNER disposition) and the owner's birth number.
select
    dp.account_id,
    dp.client_id,
    c.birth_number
from {{ ref('disp') }} as dp
inner join {{ ref('client') }} as c on c.client_id = dp.client_id
where dp.type = 'OWNER'
