-- One row per account and month with transactions: money in and out, interest, fees and the lowest balance.
-- The first model of the account-activity data product; dp_account_summary sums it per account.
select
    t.account_id,
    {{ dbt.date_trunc('month', banking_yymmdd_to_date('t.date')) }} as month_start,
    count(*) as transactions_count,
    sum(case when t.type = 'PRIJEM' then t.amount else 0 end) as credits_total,
    sum(case when t.type <> 'PRIJEM' then t.amount else 0 end) as debits_total,
    sum(case when t.k_symbol = 'UROK' then t.amount else 0 end) as interest_credited,
    sum(case when t.k_symbol = 'SLUZBY' then t.amount else 0 end) as statement_fees,
    sum(case when t.operation = 'VYBER KARTOU' then 1 else 0 end) as card_withdrawals,
    min(t.balance) as lowest_balance
from {{ ref('trans') }} as t
group by
    t.account_id,
    {{ dbt.date_trunc('month', banking_yymmdd_to_date('t.date')) }}
