-- The data must make the tiebreak matter: metric_query__ranking (k=2) only proves that ties are broken
-- by the group key if the values ranked 2 and 3 are equal. Fails (returns a row) when they are not.
with ranked as (
    select region, value, rank from {{ ref('metric_query__ranking_nulls_last') }}
)
select 'the values ranked 2 and 3 differ: k=2 does not cut through a tie' as failure
where not exists (
    select 1
    from ranked second
    join ranked third on third.value = second.value
    where second.rank = 2 and third.rank = 3
)
