select
    card_id,
    disp_id,
    type,
    issued
from {{ ref('berka_card') }}
