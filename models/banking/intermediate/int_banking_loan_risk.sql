-- Loans with the account's history in the 365 days before the loan date: average monthly credits (all of
-- them, and without cash deposits) and the coefficient of variation of the balance after each transaction.
with history as (
    select
        l.loan_id,
        sum(case when t.type = 'PRIJEM' then t.amount else 0 end) / 12.0 as monthly_income,
        sum(case when t.type = 'PRIJEM' and coalesce(t.operation, '') <> 'VKLAD' then t.amount else 0 end)
            / 12.0 as monthly_noncash_income,
        stddev_samp(t.balance) / nullif(avg(t.balance), 0) as balance_cv
    from {{ ref('int_banking_loans') }} as l
    inner join {{ ref('trans') }} as t on t.account_id = l.account_id
    where {{ dptool.days_between(banking_yymmdd_to_date('t.date'), banking_yymmdd_to_date('l.date')) }}
        between 1 and 365
    group by l.loan_id
)

select
    l.loan_id,
    l.account_id,
    l.date,
    l.amount,
    l.duration,
    l.payments,
    l.status,
    l.frequency,
    l.A2,
    l.A3,
    coalesce(history.monthly_income, 0) as monthly_income,
    coalesce(history.monthly_noncash_income, 0) as monthly_noncash_income,
    history.balance_cv
from {{ ref('int_banking_loans') }} as l
left join history on history.loan_id = l.loan_id
