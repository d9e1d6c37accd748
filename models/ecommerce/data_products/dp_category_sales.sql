-- Sales per product category (English name) and purchase month.
select
    t.product_category_name_english as category,
    {{ dbt.date_trunc('month', 'o.order_purchase_timestamp') }} as sales_month,
    count(*) as items_sold,
    count(distinct i.order_id) as orders_count,
    sum(i.price) as revenue,
    avg(i.price) as avg_item_price,
    sum(i.freight_value) / nullif(sum(i.price), 0) as freight_share
from {{ ref('order_items') }} as i
inner join {{ ref('orders') }} as o on o.order_id = i.order_id
inner join {{ ref('products') }} as p on p.product_id = i.product_id
left join {{ ref('product_category_name_translation') }} as t
    on t.product_category_name = p.product_category_name
group by
    t.product_category_name_english,
    {{ dbt.date_trunc('month', 'o.order_purchase_timestamp') }}
