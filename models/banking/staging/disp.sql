select
    disp_id,
    client_id,
    account_id,
    type
from {{ ref('berka_disp') }}
