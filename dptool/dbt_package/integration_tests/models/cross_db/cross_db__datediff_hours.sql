-- dbt.datediff in hours counts the hour boundaries crossed, as DuckDB and PostgreSQL do: 00:00 to 23:59:59 two days
-- later is 71 (dbt-spark's own rounds the elapsed time up, 72; the package's spark__datediff counts 71), 2 seconds
-- across midnight 1, a delivery before its purchase negative; no delivery is NULL
select
    order_id,
    {{ dbt.datediff('purchased_at', 'delivered_at', 'hour') }} as hours
from {{ ref('orders') }}
