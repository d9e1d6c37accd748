select
    dp.disp_id,
    dp.client_id,
    dp.account_id,
    dp.type as disposition_type,
    dp.birth_number,
    dp.date as reference_yymmdd,
    dp.date,
    dp.frequency,
    dp.A2,
    dp.A3,
    case when cards.card_id is not null then 1.0 else 0.0 end as has_card
from {{ ref('int_banking_dispositions') }} as dp
left join {{ ref('card') }} as cards on cards.disp_id = dp.disp_id
