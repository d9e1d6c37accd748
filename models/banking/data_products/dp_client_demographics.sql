-- One row per client: sex, date of birth and age decoded from the birth number, where they live, and their
-- right to an account (owner or disponent).
select
    c.client_id,
    c.birth_number,
    dp.type as disposition_type,
    dp.account_id,
    d.A2 as district_name,
    d.A3 as region,
    case
        when {{ banking_birth_yymmdd('c.birth_number') }} <> {{ banking_birth_number('c.birth_number') }}
        then 'F' else 'M'
    end as sex,
    {{ banking_yymmdd_to_date(banking_birth_yymmdd('c.birth_number')) }} as birth_date,
    {{ banking_age_years(banking_birth_yymmdd('c.birth_number'), '981231') }} as age_end_1998,
    case when dp.type = 'OWNER' then 1 else 0 end as is_owner
from {{ ref('client') }} as c
inner join {{ ref('district') }} as d on d.A1 = c.district_id
left join {{ ref('disp') }} as dp on dp.client_id = c.client_id
