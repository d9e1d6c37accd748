-- NEGATIVE PROOF: the rule sets q.where anew without the caller's `region = 'south'`; the gold of south would be
-- that of every region. The compile must fail, naming the rule macro and the predicate it removed
{{ dptool.gold('sales', rules=['delivered_only_dropping_slice'], where=["region = 'south'"]) }}
