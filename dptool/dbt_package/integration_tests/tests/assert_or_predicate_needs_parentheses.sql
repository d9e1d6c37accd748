-- The data must make parentheses matter: metric_query__rule_or_predicate is only a proof that each
-- predicate is parenthesized if, written without parentheses, the same query gives another answer.
-- Fails (returns a row) when an unparenthesized rendering equals the model's answer.
with answer as (
    select value from {{ ref('metric_query__rule_or_predicate') }}
),
unparenthesized as (
    select 'no parentheses at all' as rendering, sum(amount) as value
    from {{ ref('orders') }}
    where region = 'north' or region = 'west' and channel is null or channel <> 'internal'
    union all
    select 'the rule''s predicate without parentheses' as rendering, sum(amount) as value
    from {{ ref('orders') }}
    where (region = 'north' or region = 'west') and channel is null or channel <> 'internal'
)
select unparenthesized.rendering, unparenthesized.value
from unparenthesized
join answer on answer.value is not distinct from unparenthesized.value
