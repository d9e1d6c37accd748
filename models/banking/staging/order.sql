select
    order_id,
    account_id,
    bank_to,
    account_to,
    amount,
    k_symbol
from {{ ref('berka_order') }}
