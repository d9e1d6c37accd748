-- dbt.dateadd keeps the time of day: a purchase a year later (on Spark, the package's spark__dateadd); no
-- delivery stays NULL
select
    order_id,
    {{ dbt.dateadd('year', 1, 'purchased_at') }} as purchased_a_year_later,
    {{ dbt.dateadd('hour', -2, 'delivered_at') }} as delivered_two_hours_earlier
from {{ ref('orders') }}
