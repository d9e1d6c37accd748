-- a rule may set q.where anew as long as the caller's predicates stay: the slice (south) holds in both variants
{{ dptool.gold('sales', rules=['delivered_only_keeping_slice'], where=["region = 'south'"]) }}
