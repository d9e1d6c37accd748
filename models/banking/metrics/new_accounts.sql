select
    a.account_id,
    a.date,
    a.frequency,
    d.A2,
    d.A3,
    owners.birth_number,
    a.date as reference_yymmdd
from {{ ref('account') }} as a
inner join {{ ref('district') }} as d on d.A1 = a.district_id
left join {{ ref('int_banking_account_owners') }} as owners on owners.account_id = a.account_id
