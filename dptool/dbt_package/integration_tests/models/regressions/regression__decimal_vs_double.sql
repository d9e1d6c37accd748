-- KNOWN BUG (test_equality.sql): equality promises to compare numbers as rounded floats, but on DuckDB
-- a DECIMAL column's type reads 'DECIMAL(18,2)', which Column.is_number() does not recognize: both
-- sides are compared as strings, '450.00' against the expected DOUBLE's '450.0'.
select cast(450 as decimal(18, 2)) as value
