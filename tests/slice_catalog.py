"""A hand-made catalog for the slice-value tests: a bank's transactions (a payment characterization that holds a
blank and NULL) and a shop's order items, sold by sellers of a state, on orders of a customer's state."""

from __future__ import annotations

from dptool.project.catalog import Catalog, Dimension, Join, Metric, Rule, Table


def _table(name: str, domain: str, *columns: str) -> Table:
    return Table(f"model.p.{name}", name, domain, f'"{domain}"."{name}"', "", dict.fromkeys(columns, ""))


def _metric(id_: str, domain: str, label: str, value: str, fmt: str, unit: str, grain: str, tables: tuple[str, ...],
            columns: tuple[str, ...], period: str, components: tuple[str, ...] = ()) -> Metric:
    return Metric(id_, f"model.p.{id_}", domain, label, value, unit, fmt, value, "L1", grain, "", components,
                  tuple(f"model.p.{t}" for t in tables), columns, period)


BANK = ("trans", "account")
SHOP = ("order_items", "orders", "sellers", "customers")
SHOP_COLUMNS = ("order_id", "order_item_id", "seller_id", "active_seller_id", "price", "freight_value",
                "order_status", "order_purchase_timestamp", "seller_state", "customer_state")


def catalog() -> Catalog:
    c = Catalog("p", "0" * 64)
    for t in (_table("trans", "banking", "trans_id", "account_id", "k_symbol", "date", "balance"),
              _table("account", "banking", "account_id", "district_id"),
              _table("order_items", "ecommerce", "order_id", "order_item_id", "seller_id", "price", "freight_value"),
              _table("orders", "ecommerce", "order_id", "customer_id", "order_status", "order_purchase_timestamp"),
              _table("sellers", "ecommerce", "seller_id", "seller_state"),
              _table("customers", "ecommerce", "customer_id", "customer_state")):
        c.tables[t.unique_id] = t
    for table, column, kind, label in (
            ("trans", "k_symbol", "categorical", "payment characterization"),
            ("trans", "date", "temporal", "transaction date"),
            ("orders", "order_purchase_timestamp", "temporal", "order purchase timestamp"),
            ("orders", "order_status", "categorical", "order status"),
            ("sellers", "seller_state", "spatial", "seller state"),
            ("customers", "customer_state", "spatial", "customer state")):
        d = Dimension(f"model.p.{table}", column, kind, label)
        c.dimensions[d.id] = d
    c.joins = [Join("model.p.trans", "account_id", "model.p.account", "account_id"),
               Join("model.p.order_items", "order_id", "model.p.orders", "order_id"),
               Join("model.p.order_items", "seller_id", "model.p.sellers", "seller_id"),
               Join("model.p.orders", "customer_id", "model.p.customers", "customer_id")]
    trans_period, order_period = "model.p.trans.date", "model.p.orders.order_purchase_timestamp"
    for m in (
            _metric("overdraft_rate", "banking", "Overdraft Rate", "avg(case when balance < 0 then 1.0 else 0.0 end)",
                    "percent", "share of transactions", "transactions", BANK, ("k_symbol", "date", "balance"),
                    trans_period),
            _metric("revenue_per_order", "ecommerce", "Revenue per Order",
                    "sum(price + freight_value) / count(distinct order_id)", "currency", "BRL", "order items", SHOP,
                    SHOP_COLUMNS, order_period),
            _metric("avg_item_price", "ecommerce", "Average Item Price", "avg(price)", "currency", "BRL", "order items",
                    SHOP, SHOP_COLUMNS, order_period),
            _metric("active_sellers", "ecommerce", "Active Seller Count", "count(distinct active_seller_id)", "number",
                    "sellers", "order items", SHOP, SHOP_COLUMNS, order_period),
            _metric("gmv", "ecommerce", "GMV", "sum(price + freight_value)", "currency", "BRL", "order items", SHOP,
                    SHOP_COLUMNS, order_period),
            _metric("gmv_per_active_seller", "ecommerce", "GMV per Active Seller", "gmv / active_sellers", "currency",
                    "BRL", "order items", SHOP, SHOP_COLUMNS, order_period, ("gmv", "active_sellers"))):
        c.metrics[m.id] = m
    rule = Rule("crisis_adjustment", "macro.p.rule__crisis_adjustment", "banking", "Crisis Adjustment", "override",
                "1997-07-01", {}, ("overdraft_rate",), "")
    c.rules[rule.id] = rule
    return c
