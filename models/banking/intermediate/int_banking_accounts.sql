-- Accounts with their district, their owner's birth number and the products held on them: cards (on any
-- disposition of the account), loans and standing orders (with the largest standing order amount).
with cards as (
    select dp.account_id, count(*) as n_cards
    from {{ ref('card') }} as c
    inner join {{ ref('disp') }} as dp on dp.disp_id = c.disp_id
    group by dp.account_id
),

loans as (
    select account_id, count(*) as n_loans
    from {{ ref('loan') }}
    group by account_id
),

orders as (
    select account_id, count(*) as n_orders, max(amount) as max_order_amount
    from {{ ref('order') }}
    group by account_id
)

select
    a.account_id,
    a.date,
    a.frequency,
    d.A2,
    d.A3,
    owners.birth_number,
    case when cards.n_cards > 0 then 1.0 else 0.0 end as has_card,
    case when loans.n_loans > 0 then 1.0 else 0.0 end as has_loan,
    case when orders.n_orders > 0 then 1.0 else 0.0 end as has_standing_order,
    orders.max_order_amount
from {{ ref('account') }} as a
inner join {{ ref('district') }} as d on d.A1 = a.district_id
left join {{ ref('int_banking_account_owners') }} as owners on owners.account_id = a.account_id
left join cards on cards.account_id = a.account_id
left join loans on loans.account_id = a.account_id
left join orders on orders.account_id = a.account_id
