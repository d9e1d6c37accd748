select
    disp_id,
    client_id,
    account_id,
    type,
    birth_number,
    date as reference_yymmdd,
    date,
    frequency,
    A2,
    A3,
    {{ banking_age_years(banking_birth_number('birth_number'), 'date') }} as age_years
from {{ ref('int_banking_dispositions') }}
