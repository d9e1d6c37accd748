select
    account_id,
    district_id,
    frequency,
    date
from {{ ref('berka_account') }}
