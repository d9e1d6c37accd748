select
    account_id,
    date,
    frequency,
    A2,
    A3,
    birth_number,
    date as reference_yymmdd,
    has_card,
    has_loan,
    has_standing_order,
    max_order_amount
from {{ ref('int_banking_accounts') }}
