-- Order items, each counted twice: as 'current' value at its purchase time, and as 'prior_year' value
-- dated one year later, so that any period holds its own value and the value of the same period one
-- year before. Prior-year rows dated after the last purchase on record are left out.
with items as (
    select
        order_id,
        order_item_id,
        order_status,
        order_purchase_timestamp,
        customer_state,
        customer_city,
        seller_state,
        product_category_name_english,
        lead_product_category,
        price,
        freight_value
    from {{ ref('int_item_facts') }}
),

last_purchase as (
    select max(order_purchase_timestamp) as last_purchase_timestamp
    from items
),

both_years as (
    select
        order_id, order_item_id, order_status, order_purchase_timestamp as purchase_timestamp,
        order_purchase_timestamp, customer_state, customer_city, seller_state,
        product_category_name_english, lead_product_category, price, freight_value,
        'current' as growth_basis
    from items
    union all
    select
        order_id, order_item_id, order_status, order_purchase_timestamp as purchase_timestamp,
        {{ dbt.dateadd('year', 1, 'order_purchase_timestamp') }} as order_purchase_timestamp,
        customer_state, customer_city, seller_state,
        product_category_name_english, lead_product_category, price, freight_value,
        'prior_year' as growth_basis
    from items
)

select both_years.*
from both_years
cross join last_purchase
where both_years.order_purchase_timestamp <= last_purchase.last_purchase_timestamp
