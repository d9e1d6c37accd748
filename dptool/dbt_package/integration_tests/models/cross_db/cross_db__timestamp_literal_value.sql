-- the literal's value and type, and its SQL text for a value with an apostrophe (doubled, not closing
-- the string)
select
    {{ dptool.timestamp_literal('2018-01-01 12:30:00') }} as noon_literal,
    typeof({{ dptool.timestamp_literal('2018-01-01 12:30:00') }}) as noon_literal_type,
    '{{ dptool.timestamp_literal("d'Oeste") | replace("'", "''") }}' as rendered_with_quote
