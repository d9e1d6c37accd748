-- One row per card: its type and issue date, and the sex, age and region of the client who holds it.
select
    c.card_id,
    c.type as card_type,
    c.issued,
    dp.account_id,
    dp.client_id,
    d.A3 as holder_region,
    {{ banking_yymmdd_to_date('c.issued') }} as issued_date,
    extract(year from {{ banking_yymmdd_to_date('c.issued') }}) as issued_year,
    case
        when {{ banking_birth_yymmdd('cl.birth_number') }} <> {{ banking_birth_number('cl.birth_number') }}
        then 'F' else 'M'
    end as holder_sex,
    {{ banking_age_years(banking_birth_yymmdd('cl.birth_number'), banking_yymmdd('c.issued')) }} as holder_age_at_issue
from {{ ref('card') }} as c
inner join {{ ref('disp') }} as dp on dp.disp_id = c.disp_id
inner join {{ ref('client') }} as cl on cl.client_id = dp.client_id
inner join {{ ref('district') }} as d on d.A1 = cl.district_id
