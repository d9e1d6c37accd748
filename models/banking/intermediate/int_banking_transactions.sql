-- Transactions with their account (statement frequency, opening date) and the district of the account's
-- branch. Dates stay YYMMDD integers, as in the bank's records; day counts are taken on decoded dates.
select
    t.trans_id,
    t.account_id,
    t.date,
    t.type,
    t.operation,
    t.k_symbol,
    t.bank,
    t.amount,
    t.balance,
    a.frequency,
    a.date as account_date,
    d.A2,
    d.A3,
    {{ dptool.days_between(banking_yymmdd_to_date('a.date'), banking_yymmdd_to_date('t.date')) }} as days_since_opening
from {{ ref('trans') }} as t
inner join {{ ref('account') }} as a on a.account_id = t.account_id
inner join {{ ref('district') }} as d on d.A1 = a.district_id
