-- the literal's value and type; and, for a value with an apostrophe and a backslash, the literal's quoted text read
-- back as a string by the warehouse: the quote is escaped, not closing the string (nor, on Spark, splitting it into
-- two adjacent literals that concatenate)
select
    {{ dptool.timestamp_literal('2018-01-01 12:30:00') }} as noon_literal,
    upper(typeof({{ dptool.timestamp_literal('2018-01-01 12:30:00') }})) as noon_literal_type,
    {{ dptool.timestamp_literal("d'Oeste \\ 1") | replace(' as ' ~ dbt.type_timestamp() ~ ')', ' as ' ~ dbt.type_string() ~ ')') }} as quoted_text
