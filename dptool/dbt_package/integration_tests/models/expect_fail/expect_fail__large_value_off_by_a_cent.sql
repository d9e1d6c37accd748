-- NEGATIVE PROOF: the expected seed says 1234567.88. Compared as 4-byte floats both would be
-- 1234567.875 and the test would pass; equality compares 8-byte floats, so it must fail.
select cast(1234567.89 as double) as value
