select
    client_id,
    birth_number,
    district_id
from {{ ref('berka_client') }}
