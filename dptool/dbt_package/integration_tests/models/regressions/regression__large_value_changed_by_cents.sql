-- KNOWN BUG (test_rule_changes_answer.sql): a rule moves a 12,345,678.90 total by 5 cents; the test
-- casts to dbt.type_float(), single precision (REAL) on DuckDB, where both are 12345679: it reports
-- "the rule does not change the answer".
select 'base' as variant, cast(12345678.90 as double) as value
union all
select 'some_rule' as variant, cast(12345678.95 as double) as value
