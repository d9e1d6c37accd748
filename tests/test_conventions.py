"""The conventions of kb/<domain>/metrics.md (issue 26): the section names every item an analyst had to guess, and
each statement is what the golds do, recomputed here from the bundle's warehouse with plain SQL by the stated
convention."""

from __future__ import annotations

import re
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pytest

from dptool.evaluate.score import load_tasks
from dptool.generate.instantiate import Window, one_of, window_predicates
from dptool.generate.materialize import jinja_literal
from dptool.project.warehouse import Warehouse

ITEMS = ("Precedence", "Period membership and bounds", "Held in a period", "Trend direction and total change",
         "Percent change of a share", "Day counting", "Blank versus NULL categories",
         "A slice on another table's column", "Ties", "Apply only")
IN_DOMAIN = {
    "banking": ("held on it whatever its own date", "days 1 to 365 before it, the grant day itself excluded",
                "A blank characterisation (' ') and a missing one (NULL)"),
    "ecommerce": ("order_reviews.review_creation_date", "every review on record", "Buyers of CLV",
                  "whatever the order's status"),
}
EVERY_PERIOD = re.compile(r"\b(every|all)( reporting)? periods?\b", re.IGNORECASE)


@pytest.fixture(scope="module")
def bundle(demo_bundle) -> Path:
    return demo_bundle[0]


@pytest.fixture(scope="module")
def tasks(bundle) -> list[dict]:
    return load_tasks(bundle)


@pytest.fixture(scope="module")
def con(bundle):
    with duckdb.connect(str(bundle / "warehouse.duckdb"), read_only=True) as c:
        yield c


@pytest.fixture(scope="module")
def compiled(built_demo_copy, demo_catalog) -> list[dict]:
    """Tasks of a fixed slice each, their golds compiled by dbt as generate writes them (`_compiled_gold`): the checks
    below run on them whatever the bundle's sample holds, and on the bundle's own tasks besides."""
    def task(metric, kind, rules, start, end, last, region):
        where = [f"date >= {start}", f"date <= {last}", f"A3 = '{region}'"]
        rows = {r[0]: r[1] for r in _compiled_gold(built_demo_copy, demo_catalog, metric, rules, where)}
        assert rows["gold"] is not None and rows["base"] is not None and (rows["gold"] != rows["base"]) == bool(rules)
        window = {"start": f"19{start // 10000}-{start // 100 % 100:02d}-01", "end": end}
        return {"task_id": f"compiled:{metric}", "metric_ids": [metric], "analysis_type": kind, "rules_in_force": rules,
                "slice": {"window": window, "A3": region}, "answer_format": {"type": "value"},
                "gold": {"value": rows["gold"]}, "base": {"value": rows["base"]}}

    return [task("dscr", "point_query", [], 970101, "1997-07-01", 970630, "south Moravia"),
            task("loan_penetration_rate", "point_query", [], 960101, "1997-01-01", 961231, "north Moravia"),
            task("credit_risk_score", "point_query", ["credit_risk_score_weights", "npl_denominator"], 940101,
                 "1995-01-01", 941231, "south Moravia")]


def test_every_domain_s_catalog_opens_with_its_conventions_naming_each_item(bundle):
    for domain, phrases in IN_DOMAIN.items():
        text = (bundle / "kb" / domain / "metrics.md").read_text(encoding="utf-8")
        head, _, rest = text.partition("\n## Conventions\n")
        assert rest and "\n## " not in head, domain  # the first section, before any metric
        section = rest.split("\n## ")[0]
        for item in ITEMS:
            assert f"- **{item}.** " in section, (domain, item)
        assert "A policy that changes a metric prevails over the catalog's formula" in section
        assert "A policy applies from its effective date" in section and "unless it says otherwise" in section
        assert "### In this domain" in section
        for phrase in phrases:
            assert phrase in section, (domain, phrase)


def test_a_policy_applied_before_its_effective_date_says_so(demo_catalog, demo_manifest, con):
    """Precedence: a policy applies from its effective date unless it says otherwise. Every demo policy whose date
    lies inside or after the data either conditions on that date in its macro, or its document says it applies
    to every period (the documents of policies dated after the data said "every period" without saying it was
    meant)."""
    (banking,), = con.execute("select min(date) from banking.trans").fetchall()
    (ecommerce,), = con.execute("select min(order_purchase_timestamp) from ecommerce.orders").fetchall()
    start = {"banking": date(1900 + banking // 10000, banking // 100 % 100, banking % 100),
             "ecommerce": ecommerce.date()}
    macros = {m["name"]: m["macro_sql"] for m in demo_manifest["macros"].values()}
    checked = 0
    for rule in demo_catalog.rules.values():
        effective = date.fromisoformat(rule.effective_from)
        if effective <= start[rule.domain]:
            continue
        checked += 1
        sql = macros[f"rule__{rule.id}"]
        dated = rule.effective_from in sql or effective.strftime("%y%m%d") in sql
        assert dated or EVERY_PERIOD.search(rule.document), rule.id
    assert checked >= 20


def _series_change(series: list[tuple[str, float]]) -> tuple[float, str]:
    """The total change in percent and the peak month, as the conventions state them."""
    first, last = series[0][1], series[-1][1]
    return (last - first) / abs(first) * 100, max(series, key=lambda p: p[1])[0]


def test_trend_golds_change_from_first_to_last_actual_month_relative_for_a_share(tasks, con):
    trends = [t for t in tasks if t["analysis_type"] == "trend_analysis"]
    assert len(trends) >= 10
    shares = 0
    for task in trends:
        columns, rows = _run(con, task["gold_sql"])
        series = sorted((_month(r["period"]), float(r["value"])) for r in (dict(zip(columns, row, strict=True))
                                                                          for row in rows) if r["value"] is not None)
        change, peak = _series_change(series)
        assert task["gold"]["total_change_pct"] == pytest.approx(change, rel=1e-6, abs=1e-6), task["task_id"]
        assert task["gold"]["peak_period"] == peak
        if task["answer_format"].get("format") == "percent" and abs(series[-1][1] - series[0][1]) > 1e-4:
            shares += 1  # in points the change would be 100 x (last - first): not what the gold says
            points = (series[-1][1] - series[0][1]) * 100
            assert task["gold"]["total_change_pct"] != pytest.approx(points, rel=1e-4, abs=1e-6), task["task_id"]
    assert shares >= 1


def _yymmdd(d: date) -> int:
    return d.year % 100 * 10000 + d.month * 100 + d.day


def _window(task: dict) -> tuple[int, int]:
    w = task["slice"]["window"]
    return _yymmdd(date.fromisoformat(w["start"])), _yymmdd(date.fromisoformat(w["end"]) - timedelta(days=1))


SLICE_COLUMNS = {"A2": "d.A2", "A3": "d.A3", "frequency": "a.frequency"}


def _sliced(task: dict) -> tuple[str, list] | None:
    """The task's one-value slice as plain SQL on account a / district d, or None when it is not such a slice."""
    keys = [k for k in task["slice"] if k != "window"]
    if keys == []:
        return "", []
    if len(keys) == 1 and keys[0] in SLICE_COLUMNS:
        return f" and {SLICE_COLUMNS[keys[0]]} = ?", [task["slice"][keys[0]]]
    return None


def test_a_product_held_on_an_account_counts_whatever_its_date(tasks, compiled, con):
    """Held in a period, and period bounds (both ends included): Loan Penetration Rate and Standing Order Coverage
    before any policy, recomputed over the accounts opened in the window, a loan or order counted whatever its date
    (a point query, or a breakdown: one value per group)."""
    held = {"loan_penetration_rate": "exists (select 1 from banking.loan l where l.account_id = a.account_id)",
            "standing_order_coverage": 'exists (select 1 from banking."order" o where o.account_id = a.account_id)'}
    by_period_end = "exists (select 1 from banking.loan l where l.account_id = a.account_id and l.date <= {last})"
    checked = differs = 0
    for task in [*tasks, *compiled]:
        metric = (task.get("metric_ids") or [None])[0]
        kind = task["analysis_type"]
        if metric not in held or kind not in ("point_query", "decomposition") or "window" not in task["slice"]:
            continue
        sliced = _sliced(task)
        key = task["answer_format"].get("key")
        if sliced is None or (kind == "decomposition" and key not in SLICE_COLUMNS):
            continue
        start, last = _window(task)
        group = f"{SLICE_COLUMNS[key]}, " if kind == "decomposition" else ""

        def value_of(test: str, sliced=sliced, group=group, start=start, last=last):
            sql = (f"select {group}avg(case when {test} then 1.0 else 0.0 end) from banking.account a join "
                   f"banking.district d on d.A1 = a.district_id where a.date >= ? and a.date <= ?{sliced[0]}"
                   + (f" group by {group.rstrip(', ')}" if group else ""))
            rows = con.execute(sql, [start, last, *sliced[1]]).fetchall()
            return {r[0]: float(r[1]) for r in rows} if group else float(rows[0][0])

        value = value_of(held[metric])
        if kind == "decomposition":
            assert {r[key]: r["value"] for r in task["base"]} == pytest.approx(value, rel=1e-6, abs=1e-6), \
                task["task_id"]
        else:
            assert task["base"]["value"] == pytest.approx(value, rel=1e-6, abs=1e-6), task["task_id"]
        checked += 1
        if metric == "loan_penetration_rate":
            differs += value_of(by_period_end.format(last=last)) != pytest.approx(value, rel=1e-9)
    assert checked >= 1
    # the convention matters: counting only the loans granted by the period's end gives another answer
    (ever, by_end), = con.execute(
        "select avg(case when exists (select 1 from banking.loan l where l.account_id = a.account_id) then 1.0 "
        "else 0.0 end), avg(case when exists (select 1 from banking.loan l where l.account_id = a.account_id and "
        "l.date <= 961231) then 1.0 else 0.0 end) from banking.account a where a.date between 960101 and 961231"
    ).fetchall()
    assert ever > by_end and (differs or not any(t["metric_ids"][:1] == ["loan_penetration_rate"] for t in tasks))


def test_the_365_days_before_a_grant_exclude_the_grant_day(tasks, compiled, con):
    """Day counting: the DSCR before any policy, recomputed from the transactions of days 1 to 365 before each
    loan's grant date."""
    as_date = "make_date(1900 + {0} // 10000, {0} // 100 % 100, {0} % 100)"
    sql = (f"select avg(coalesce((select sum(t.amount) from banking.trans t where t.account_id = l.account_id "
           f"and t.type = 'PRIJEM' and date_diff('day', {as_date.format('t.date')}, {as_date.format('l.date')}) "
           f"between 1 and 365), 0) / 12.0 / l.payments) from banking.loan l join banking.account a on "
           f"a.account_id = l.account_id join banking.district d on d.A1 = a.district_id "
           f"where l.date >= ? and l.date <= ?")
    checked = 0
    for task in [*tasks, *compiled]:
        if task.get("metric_ids", [None])[:1] != ["dscr"] or task["analysis_type"] != "point_query" \
                or "window" not in task["slice"]:
            continue
        sliced = _sliced(task)
        if sliced is None:
            continue
        (value,), = con.execute(sql + sliced[0], [*_window(task), *sliced[1]]).fetchall()
        assert task["base"]["value"] == pytest.approx(float(value), rel=1e-6, abs=1e-6), task["task_id"]
        checked += 1
    assert checked >= 1


def test_a_ranking_breaks_ties_by_the_group_s_name(tasks):
    rankings = [t for t in tasks if t["analysis_type"] == "ranking"]
    assert rankings
    for task in rankings:
        key = task["answer_format"]["key"]
        for answer in (task["gold"], task["base"]):
            rows = answer["ranking"] if isinstance(answer, dict) else answer
            order = [(-r["value"] if r["value"] is not None else float("inf"), str(r[key])) for r in rows]
            assert order == sorted(order), task["task_id"]


def test_a_blank_and_a_null_category_are_two_groups(tasks, con):
    """Blank versus NULL: the bank's characterisation (k_symbol) holds both, and a breakdown's gold keeps them apart;
    Transaction Count by characterisation before any policy is the plain count of each group, NULL and ' ' apart."""
    rows = con.execute("select k_symbol, count(*) from banking.trans where k_symbol is null or trim(k_symbol) = '' "
                       "group by k_symbol order by k_symbol nulls last").fetchall()
    assert [k for k, _ in rows] == [" ", None]
    for task in tasks:
        if task["metric_ids"][:1] != ["transaction_count"] or task["analysis_type"] != "decomposition" \
                or task["answer_format"]["key"] not in ("k_symbol", "operation") or "window" not in task["slice"]:
            continue
        key = task["answer_format"]["key"]
        counts = con.execute(f"select {key}, count(*) from banking.trans where date >= ? and date <= ? group by {key}",
                             list(_window(task))).fetchall()
        assert {r[key]: r["value"] for r in task["base"]} == {k: float(n) for k, n in counts}, task["task_id"]
    # the bundle's sample may hold no such breakdown: the compiled gold of the next test always runs


def test_a_breakdown_compiled_by_dbt_keeps_blank_and_null_apart(built_demo_copy, demo_catalog):
    """Blank versus NULL, on a gold dbt compiles (dptool.gold, as generate writes it): Transaction Count by
    characterisation in 1995 holds a ' ' group and a NULL group, each the plain count of its rows."""
    rows = _compiled_gold(built_demo_copy, demo_catalog, "transaction_count", [], ["date >= 950101", "date <= 951231"],
                          group_by=["k_symbol"], shape="grouped")
    gold = {r[1]: r[2] for r in rows if r[0] == "gold"}
    assert {" ", None} <= set(gold)
    trans = _relations(demo_catalog)["trans"]
    with Warehouse.of(built_demo_copy.connection()) as wh:
        _, counts = wh.query(f"select k_symbol, count(*) from {trans} where date between 950101 and 951231 "
                             "group by k_symbol")
    assert gold == {k: n for k, n in counts}


def test_a_blank_or_null_slice_value_is_named_in_words_and_filters_its_own_rows(tasks, con):
    """Blank versus NULL, in a question: a task sliced on the blank characterization names it "the blank payment
    characterization (' ')" (NULL: "not recorded (NULL)"), and its gold before any policy is over the ' ' rows alone."""
    for task in tasks:
        value = task["slice"].get("k_symbol", "absent")
        groups = task["slice"].get("groups") or []
        if task.get("dimension") != "k_symbol" or not (value in (" ", None) or " " in groups or None in groups):
            continue
        words = [f"the blank {label} (' ')" if v == " " else f"{label} not recorded (NULL)"
                 for v in ([value] if value != "absent" else groups) if v in (" ", None)
                 for label in ("payment characterization", "standing order purpose")]
        assert any(w in task["question"] for w in words), task["question"]
    # the bundle's sample may ask nothing of them: tests/test_slice_values.py phrases such tasks whatever it holds


def test_a_blank_and_a_null_slice_compiled_by_dbt_filter_exactly_their_rows(built_demo_copy, demo_catalog):
    """The slice predicate a candidate writes for ' ' and for NULL (`one_of`: `= ' '`, `IS NULL`), in the gold dbt
    compiles: Overdraft Rate in Q4 1997 is the plain SQL's over exactly those rows (not `= NULL`, which holds none)."""
    trans = _relations(demo_catalog)["trans"]
    window = window_predicates("date", Window(date(1997, 10, 1), date(1998, 1, 1), "Q4 1997"), "yymmdd", "duckdb")
    for value, test in ((" ", "k_symbol = ' '"), (None, "k_symbol is null")):
        rows = _compiled_gold(built_demo_copy, demo_catalog, "overdraft_rate", [],
                              [*window, one_of("k_symbol", [value], "duckdb")])
        with Warehouse.of(built_demo_copy.connection()) as wh:  # after dbt: one process holds the file at a time
            _, ((expected,),) = wh.query(f"select avg(case when balance < 0 then 1.0 else 0.0 end) from {trans} "
                                         f"where date between 971001 and 971231 and {test}")
        assert expected is not None
        assert {r[0]: r[1] for r in rows}["gold"] == pytest.approx(float(expected), rel=1e-9), value


def test_a_slice_on_the_seller_s_state_keeps_that_seller_s_items(built_demo_copy, demo_catalog):
    """A slice on another table's column: Revenue per Order for seller state RJ in Q3 2018 under Revenue Recognition,
    as dbt compiles its gold, is the RJ sellers' items over the orders that hold one (149.26), not the whole of every
    order that has an RJ seller (189.26)."""
    where = [*window_predicates("order_purchase_timestamp", Window(date(2018, 7, 1), date(2018, 10, 1), "Q3 2018"),
                                "timestamp", "duckdb"), one_of("seller_state", ["RJ"], "duckdb")]
    rows = _compiled_gold(built_demo_copy, demo_catalog, "revenue_per_order", ["revenue_recognition"], where)
    gold = {r[0]: r[1] for r in rows}["gold"]
    t = _relations(demo_catalog)
    items = (f"select i.order_id, i.price + i.freight_value as value, s.seller_state from {t['order_items']} i "
             f"join {t['orders']} o using (order_id) join {t['sellers']} s using (seller_id) "
             "where o.order_status not in ('canceled', 'unavailable') "
             "and o.order_purchase_timestamp >= '2018-07-01' and o.order_purchase_timestamp < '2018-10-01'")
    with Warehouse.of(built_demo_copy.connection()) as wh:
        _, ((own,),) = wh.query(f"select sum(value) / count(distinct order_id) from ({items}) "
                                "where seller_state = 'RJ'")
        _, ((whole,),) = wh.query(f"select sum(value) / count(distinct order_id) from ({items}) where order_id in "
                                  f"(select order_id from ({items}) where seller_state = 'RJ')")
    assert gold == pytest.approx(float(own), rel=1e-9)
    assert abs(float(whole) - float(own)) > 1


def test_a_question_on_a_per_order_metric_by_seller_state_says_which_rows_count(tasks):
    """The demo's Revenue per Order tasks sliced on a seller state say that only that state's order items count."""
    for task in tasks:
        if task["metric_ids"][:1] != ["revenue_per_order"] or task.get("dimension") != "seller_state":
            continue
        value = task["slice"].get("seller_state")
        expected = (f"Count only the order items whose seller state is {value}, not all the order items of every "
                    "order that has one." if value else "Count for each seller state only its own order items, not "
                    "all the order items of every order that has one of them.")
        assert expected in task["question"], task["question"]
    # the bundle's sample may hold none: tests/test_slice_values.py phrases such tasks whatever it holds


def _run(con, sql: str) -> tuple[list[str], list[tuple]]:
    cur = con.execute(sql)
    rows = cur.fetchall()
    columns = [d[0] for d in cur.description]
    gold = [r for r in rows if r[columns.index("variant")] == "gold"] if "variant" in columns else rows
    return columns, gold


def _month(value) -> str:
    if isinstance(value, int | float):
        yymm = int(value)
        return f"{1900 + yymm // 100}-{yymm % 100:02d}"
    return f"{value.year:04d}-{value.month:02d}"



def test_clv_s_buyers_are_every_order_s_while_revenue_recognition_takes_value_only(tasks, con):
    """Buyers of CLV (ecommerce): with Revenue Recognition in force (and Insured Freight Exclusion, or not), CLV is the
    GMV of recognized orders over the buyers (customer records) of every order placed, whatever its status."""
    value_rules = {"revenue_recognition", "insured_freight_exclusion"}
    checked = fewer = 0
    for task in tasks:
        rules = set(task.get("rules_in_force") or ())
        if task["metric_ids"][:1] != ["clv"] or "revenue_recognition" not in rules or not rules <= value_rules \
                or task["analysis_type"] not in ("point_query", "threshold_crossing", "counterfactual"):
            continue
        keys = [k for k in task["slice"] if k not in ("window", "withdrawn_rule")]
        if not set(keys) <= {"customer_state", "customer_city"}:
            continue
        w = task["slice"].get("window") or {"start": "1900-01-01", "end": "2100-01-01"}
        where = "o.order_purchase_timestamp >= ? and o.order_purchase_timestamp < ?" + "".join(
            f" and cu.{k} = ?" for k in keys)
        args = [w["start"], w["end"], *(task["slice"][k] for k in keys)]
        freight = ("case when t.product_category_name_english = 'watches_gifts' then 0 else i.freight_value end"
                   if "insured_freight_exclusion" in rules else "i.freight_value")
        (value,), = con.execute(
            f"select sum(i.price + {freight}) from ecommerce.order_items i join ecommerce.orders o using (order_id) "
            "join ecommerce.customers cu using (customer_id) left join ecommerce.products p using (product_id) "
            "left join ecommerce.product_category_name_translation t using (product_category_name) "
            f"where o.order_status not in ('canceled', 'unavailable') and {where}", args).fetchall()
        (every, recognized), = con.execute(
            "select count(distinct o.customer_id), count(distinct o.customer_id) filter (where o.order_status not in "
            "('canceled', 'unavailable')) from ecommerce.orders o join ecommerce.customers cu using (customer_id) "
            f"where {where}", args).fetchall()
        assert task["gold"]["value"] == pytest.approx(float(value) / every, rel=1e-6, abs=1e-6), task["task_id"]
        checked += 1
        fewer += recognized < every
    assert checked == 0 or fewer >= 1  # the bundle's sample may hold none: the compiled gold below always runs


def test_clv_compiled_by_dbt_counts_every_order_s_buyer(built_demo_copy, demo_catalog):
    """Buyers of CLV, on a gold dbt compiles: CLV of MG in Q2 2018 under Revenue Recognition alone is the GMV of
    recognized orders over the customer records of every order placed there, fewer of whom placed a recognized one."""
    where = ["order_purchase_timestamp >= '2018-04-01'", "order_purchase_timestamp < '2018-07-01'",
             "customer_state = 'MG'"]
    rows = _compiled_gold(built_demo_copy, demo_catalog, "clv", ["revenue_recognition"], where)
    gold = {r[0]: r[1] for r in rows}
    t = _relations(demo_catalog)
    window = ("o.order_purchase_timestamp >= '2018-04-01' and o.order_purchase_timestamp < '2018-07-01' "
              "and cu.customer_state = 'MG'")
    recognized = "o.order_status not in ('canceled', 'unavailable')"
    with Warehouse.of(built_demo_copy.connection()) as wh:
        _, ((value,),) = wh.query(
            f"select sum(i.price + i.freight_value) from {t['order_items']} i join {t['orders']} o "
            f"on o.order_id = i.order_id join {t['customers']} cu on cu.customer_id = o.customer_id "
            f"where {recognized} and {window}")
        _, ((every, buying),) = wh.query(
            f"select count(distinct o.customer_id), count(distinct case when {recognized} then o.customer_id end) "
            f"from {t['orders']} o join {t['customers']} cu on cu.customer_id = o.customer_id where {window}")
    assert gold["gold"] == pytest.approx(float(value) / every, rel=1e-9)
    assert buying < every and gold["gold"] != pytest.approx(float(value) / buying, rel=1e-6)


def _relations(catalog) -> dict[str, str]:
    return {t.name: t.relation_name for t in catalog.tables.values()}


def _compiled_gold(project, catalog, metric: str, rules: list[str], where: list[str], group_by=(), shape="value"):
    """The rows of the gold model `dptool generate` would write for this slice: `dbt compile --inline` of
    dptool.gold, run on the project's target (nothing is written there)."""
    args = (f"metric={jinja_literal(metric)}, rules={jinja_literal(catalog.rules_argument(metric, rules))}, "
            f"where={jinja_literal(where)}, group_by={jinja_literal(list(group_by))}, shape={jinja_literal(shape)}")
    results = project.run("compile", "--inline", "{{ dptool.gold(" + args + ") }}")
    (sql,) = [r.compiled_code for r in results if r.compiled_code]
    with Warehouse.of(project.connection()) as wh:
        _, rows = wh.query(sql)
    return rows


def test_a_policy_prevails_over_the_catalog_s_formula_in_every_period(tasks, compiled, con):
    """Precedence: the Credit Risk Score's catalog formula (equal thirds, every loan) gives way to the weights policy
    (50 / 30 / 20) and to the NPL Denominator (running loans, C or D, the shares still counted per loan) where they
    are in force, also in periods before their effective dates (both say they apply to every period; the demo's
    tasks include windows of 1993 and 1994, before either took effect)."""
    as_date = "make_date(1900 + {0} // 10000, {0} // 100 % 100, {0} % 100)"
    history = (f"from banking.trans t where t.account_id = l.account_id and date_diff('day', "
               f"{as_date.format('t.date')}, {as_date.format('l.date')}) between 1 and 365")
    loans = ("select l.loan_id, l.status, l.payments, d.A3, l.date, "
             f"coalesce((select sum(case when t.type = 'PRIJEM' then t.amount else 0 end) {history}), 0) / 12.0 "
             f"as income, (select stddev_samp(t.balance) / nullif(avg(t.balance), 0) {history}) as cv "
             "from banking.loan l join banking.account a on a.account_id = l.account_id "
             "join banking.district d on d.A1 = a.district_id")
    shares = ["avg(case when status in ('B', 'D') then 1.0 else 0.0 end)",
              "avg(case when income < 3 * payments then 1.0 else 0.0 end)",
              "avg(case when cv > 0.6 then 1.0 else 0.0 end)"]
    checked = 0
    for task in [*tasks, *compiled]:
        rules = set(task.get("rules_in_force") or ())
        kind = task["analysis_type"]
        if task["metric_ids"][:1] != ["credit_risk_score"] or not rules or \
                not rules <= {"credit_risk_score_weights", "npl_denominator"} or "window" not in task["slice"] or \
                kind not in ("point_query", "threshold_crossing", "decomposition"):
            continue
        if kind == "decomposition" and task["answer_format"]["key"] != "A3":
            continue
        weights = (0.5, 0.3, 0.2) if "credit_risk_score_weights" in rules else (1 / 3, 1 / 3, 1 / 3)
        value = "100 * (" + " + ".join(f"{w!r} * {s}" for w, s in zip(weights, shares, strict=True)) + ")"
        where = "date >= ? and date <= ?" + (" and status in ('C', 'D')" if "npl_denominator" in rules else "")
        args = list(_window(task))
        if "A3" in task["slice"]:
            where, args = where + " and A3 = ?", [*args, task["slice"]["A3"]]
        group = kind == "decomposition"
        sql = f"select {'A3, ' if group else ''}{value} from ({loans}) where {where}"
        sql += " group by A3" if group else ""
        rows = con.execute(sql, args).fetchall()
        if group:
            assert {r["A3"]: r["value"] for r in task["gold"]} == pytest.approx(
                {a: float(v) for a, v in rows}, rel=1e-6, abs=1e-6), task["task_id"]
        else:
            assert task["gold"]["value"] == pytest.approx(float(rows[0][0]), rel=1e-6, abs=1e-6), task["task_id"]
        checked += 1
    assert checked >= 1, "no Credit Risk Score task under its weights or NPL policy alone"


def test_apply_only_drops_every_other_policy_the_weights_included(built_demo_copy, demo_catalog):
    """Apply only: the Seller Fulfillment Score of Q1 2018 under "apply only" the Delivery SLA Grace Period is the
    catalog's 0.6 / 0.4 of the on-time share with the grace day (the policy applies from 2018) and of CSAT over every
    review: neither the weights policy (0.7 / 0.3) nor CSAT's policies (neutral reviews out, quarantine) apply."""
    assert {r.id for r in demo_catalog.governing_rules("seller_fulfillment_score")} >= {
        "delivery_sla_grace_period", "seller_score_weights", "csat_neutral_exclusion"}
    where = ["order_purchase_timestamp >= '2018-01-01'", "order_purchase_timestamp < '2018-04-01'"]
    rows = _compiled_gold(built_demo_copy, demo_catalog, "seller_fulfillment_score", ["delivery_sla_grace_period"],
                          where)
    gold = {r[0]: r[1] for r in rows}["gold"]
    t = _relations(demo_catalog)
    window = "o.order_purchase_timestamp >= '2018-01-01' and o.order_purchase_timestamp < '2018-04-01'"
    late = ("date_diff('day', cast(o.order_estimated_delivery_date as date), "
            "cast(o.order_delivered_customer_date as date))")
    with Warehouse.of(built_demo_copy.connection()) as wh:
        _, ((on_time,),) = wh.query(
            f"select avg(case when {late} <= 1 then 1.0 else 0.0 end) from {t['orders']} o "
            f"where o.order_status = 'delivered' and o.order_delivered_customer_date is not null and {window}")
        _, ((csat, neutral_out),) = wh.query(
            "select avg(case when r.review_score >= 4 then 1.0 else 0.0 end), "
            "avg(case when r.review_score >= 4 then 1.0 when r.review_score <> 3 then 0.0 end) "
            f"from {t['order_reviews']} r join {t['orders']} o on o.order_id = r.order_id where {window}")
    on_time, csat, neutral_out = float(on_time), float(csat), float(neutral_out)
    assert gold == pytest.approx(0.6 * on_time + 0.4 * csat, rel=1e-9)
    for other in (0.7 * on_time + 0.3 * csat, 0.6 * on_time + 0.4 * neutral_out):
        assert gold != pytest.approx(other, rel=1e-6)


def test_fee_income_without_its_1996_policy_is_statement_fees_only(built_demo_copy, demo_catalog):
    """Definitions before a policy: Fee Income of 1997 as the catalog defines it (no policy applied, the Fee Structure
    Change 1996 withdrawn) is the statement fees (SLUZBY) alone, as its catalog formula says; under "apply only" that
    policy, sanction interest joins them."""
    where = ["date >= 970101", "date <= 971231"]
    bare = {r[0]: r[1] for r in _compiled_gold(built_demo_copy, demo_catalog, "fee_income", [], where)}["gold"]
    with_policy = {r[0]: r[1] for r in _compiled_gold(built_demo_copy, demo_catalog, "fee_income",
                                                       ["fee_structure_change_1996"], where)}["gold"]
    assert demo_catalog.metrics["fee_income"].formula == "SUM(fees charged by the bank: statement fees)"
    t = _relations(demo_catalog)
    with Warehouse.of(built_demo_copy.connection()) as wh:
        _, ((fees, sanctions),) = wh.query(
            "select sum(case when k_symbol = 'SLUZBY' then amount else 0 end), "
            f"sum(case when k_symbol = 'SANKC. UROK' then amount else 0 end) from {t['trans']} "
            "where date >= 970101 and date <= 971231")
    assert sanctions > 0
    assert float(bare) == pytest.approx(float(fees), rel=1e-9)
    assert float(with_policy) == pytest.approx(float(fees) + float(sanctions), rel=1e-9)
