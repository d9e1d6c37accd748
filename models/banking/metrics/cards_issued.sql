select
    card_id,
    disp_id,
    account_id,
    type,
    issued_yymmdd as date,
    issued,
    birth_number,
    issued_yymmdd as reference_yymmdd,
    frequency,
    A2,
    A3
from {{ ref('int_banking_cards') }}
