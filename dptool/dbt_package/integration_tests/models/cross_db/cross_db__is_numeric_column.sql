-- every integer and decimal type is a number to dptool's tests: compared with the expected seed's doubles as rounded
-- floats, not as text ('3' is not '3.0'); Spark names two of them `tinyint` and `int`
select
    cast(1 as tinyint) as tiny,
    cast(2 as smallint) as small,
    cast(3 as int) as regular,
    cast(4 as bigint) as big,
    cast(5.5 as decimal(9, 2)) as exact
