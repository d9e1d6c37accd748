-- dptool.support counts the rows the value reads (amount not NULL: centre's one order has none, south's NULL
-- amount is not counted), the entities among them and the events of its numerator (an amount over 50)
{{ dptool.support('sales', group_by=['region'], entity=['order_id'], min_rows=2, min_entities=1, min_events=1,
                  counted={'sales': {'rows': '(amount) is not null', 'events': '(amount) > 50'}}) }}
