"""Slice and group values a question names in one reading: a blank, whitespace-only or NULL value in words, a value
no wording can tell apart refused in one line, a slice on another table's column that says which rows count; the
SQL filters exactly the value named, and the scorer takes the blank group by the name the question gives it."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import duckdb
import pytest

from dptool.answers import compare
from dptool.generate.export import CONVENTION_ITEMS, conventions_section, describe
from dptool.generate.instantiate import Candidate, Window, instantiate, one_of
from dptool.generate.phrase import phrase
from dptool.generate.profile import DimensionProfile
from dptool.generate.sample import Skeleton
from dptool.generate.slices import entity_of_other_rows
from dptool.generate.values import unsayable
from tests.slice_catalog import catalog

FIXTURE = Path(__file__).parent / "fixtures" / "slice_questions.txt"
Q4_1997 = Window(date(1997, 10, 1), date(1998, 1, 1), "Q4 1997")
CATALOG = catalog()


def cases() -> list[dict]:
    """The cases of the fixture file: `# key: value` lines, then the expected question."""
    out = []
    for block in FIXTURE.read_text(encoding="utf-8").split("\n\n"):
        meta, text = {}, []
        for line in block.strip().splitlines():
            if line.startswith("# ") and ": " in line:
                key, value = line[2:].split(": ", 1)
                meta[key] = value
            elif not line.startswith("#"):
                text.append(line)
        if "title" in meta:
            out.append({**meta, "question": " ".join(text)})
    return out


def candidate(case: dict) -> Candidate:
    dim = CATALOG.dimensions[case["dimension"]]
    rules = tuple(json.loads(case.get("rules", "[]")))
    skeleton = Skeleton(case["metric"], dim.id, dim.kind, rules, CATALOG.metrics[case["metric"]].tables)
    kind = case["type"]
    grouped = kind in ("comparison", "significance_testing", "decomposition", "ranking")
    c = Candidate(skeleton, kind, [], [dim.column] if grouped else [], "value", None,
                  slice=json.loads(case["slice"]), window=Q4_1997)
    if kind == "counterfactual":
        c.withdrawn_rule = c.slice["withdrawn_rule"]
    return c


CASES = cases()


@pytest.mark.parametrize("case", CASES, ids=[c["title"] for c in CASES])
def test_question_names_the_value(case):
    task = json.loads(case.get("task", "{}"))
    assert phrase(candidate(case), task, CATALOG) == case["question"]


def test_the_fixture_holds_every_kind_of_case():
    titles = " ".join(c["title"] for c in CASES)
    assert len(CASES) >= 15
    for words in ("blank slice value", "NULL slice value", "comparison", "significance", "counterfactual",
                  "seller's state", "one reading, nothing said"):
        assert words in titles


# --- the SQL filters exactly the value the question names -----------------------------------------------------------


@pytest.fixture()
def trans(tmp_path):
    """A transactions table whose characterization holds a blank, an empty value, two spaces, NULL and a code."""
    con = duckdb.connect(str(tmp_path / "t.duckdb"))
    con.execute("create table trans (k_symbol varchar, balance double)")
    rows = [(" ", -1.0)] * 3 + [("", 1.0)] * 5 + [("  ", 1.0)] * 7 + [(None, -1.0)] * 11 + [("SIPO", 1.0)] * 13
    con.executemany("insert into trans values (?, ?)", rows)
    yield con
    con.close()


@pytest.mark.parametrize(("values", "rows"), [([" "], 3), ([None], 11), ([""], 5), (["  "], 7), ([" ", "SIPO"], 16),
                                              ([None, " "], 14), (["SIPO", None], 24)])
def test_the_slice_predicate_holds_exactly_the_values_named(trans, values, rows):
    predicate = one_of("k_symbol", values, "duckdb")
    (n,), = trans.execute(f"select count(*) from trans where ({predicate})").fetchall()
    assert n == rows, predicate


def test_one_of_reads_as_before_for_values_that_are_not_null():
    assert one_of("k_symbol", [" "], "duckdb") == "k_symbol = ' '"
    assert one_of("state", ["RJ", "SP"], "duckdb") == "state IN ('RJ', 'SP')"
    assert one_of("k_symbol", [None], "duckdb") == "k_symbol IS NULL"
    assert one_of("k_symbol", [" ", None], "duckdb") == "k_symbol = ' ' OR k_symbol IS NULL"
    assert one_of("k_symbol", ["it's"], "duckdb") == "k_symbol = 'it''s'"  # a literal, never string formatting


def test_a_blank_slice_candidate_filters_the_blank_rows(trans):
    """instantiate draws the blank value (it is frequent), and its `where` keeps the blank rows and no other."""
    profile = DimensionProfile(4, ((" ", 5000),))
    period = DimensionProfile(12, months=tuple((1997, m, 1000) for m in range(1, 13)), encoding="timestamp")
    skeleton = Skeleton("overdraft_rate", "model.p.trans.k_symbol", "categorical", (), ("model.p.trans",))
    made = instantiate([skeleton], CATALOG, {"model.p.trans.k_symbol": profile, "model.p.trans.date": period}, 42,
                       "duckdb", types=("point_query",))
    assert [c.slice["k_symbol"] for c in made] == [" "]
    predicate = next(w for w in made[0].where if "k_symbol" in w)
    (n,), = trans.execute(f"select count(*) from trans where ({predicate})").fetchall()
    assert n == 3
    assert "the blank payment characterization (' ')" in phrase(made[0], {}, CATALOG)


# --- a value no question can name in one reading is refused ----------------------------------------------------------


@pytest.mark.parametrize(("value", "others", "reason"), [
    ("SIPO\t", ["SIPO\t"], "slice value 'SIPO\\t' holds the control or invisible character '\\t': no question can say "
                           "it"),
    ("A\u200bB", [], "slice value 'A\\u200bB' holds the control or invisible character '\\u200b': no question can "
                     "say it"),
    ("\u00a0", [" "], "slice value '\\xa0' holds the white space '\\xa0', which reads as a space: no question can say "
                      "it"),
    ("SIPO ", ["SIPO", "SIPO "], "slice value 'SIPO ' reads as 'SIPO', as the value 'SIPO' does: no question can tell "
                                 "them apart"),
    ("SIPO", ["SIPO", "SIPO "], "slice value 'SIPO' reads as 'SIPO', as the value 'SIPO ' does: no question can tell "
                                "them apart"),
    ("credit_card", ["credit card", "credit_card"], "slice value 'credit_card' reads as 'credit card', as the value "
                                                    "'credit card' does: no question can tell them apart"),
])
def test_an_unsayable_value_is_refused_in_one_line(value, others, reason):
    assert unsayable(value, others, "payment characterization") == reason
    assert "\n" not in reason


@pytest.mark.parametrize(("value", "others"), [(" ", ["", "  ", None]), ("", [" "]), (None, ["NULL", " "]),
                                               ("SIPO ", ["UROK"]), ("SANKC. UROK", []), ("São Paulo", []),
                                               (12, ["12.5"])])
def test_a_sayable_value_is_not_refused(value, others):
    assert unsayable(value, others, "payment characterization") is None


def test_a_value_with_trailing_spaces_is_refused_by_instantiate():
    """Two frequent values read alike ("SIPO " and "SIPO"): no candidate reads either, each refused in one line for
    the drop log (the card's "Drops by reason")."""
    profile = DimensionProfile(3, (("SIPO ", 5000), ("SIPO", 3000)))
    period = DimensionProfile(12, months=tuple((1997, m, 1000) for m in range(1, 13)), encoding="timestamp")
    skeleton = Skeleton("overdraft_rate", "model.p.trans.k_symbol", "categorical", (), ("model.p.trans",))
    refused: list = []
    made = instantiate([skeleton], CATALOG, {"model.p.trans.k_symbol": profile, "model.p.trans.date": period}, 42,
                       "duckdb", types=("point_query", "comparison"), refused=refused)
    assert made == []
    assert [(why, describe(c)) for why, c in refused] == [
        (REFUSED.format(v="SIPO ", twin="SIPO"),
         "overdraft_rate · point_query · k_symbol = SIPO  · the first half of 1997"),
        (REFUSED.format(v="SIPO", twin="SIPO "),
         "overdraft_rate · comparison · k_symbol: SIPO vs SIPO  · the second half of 1997"),
    ]


REFUSED = ("slice value {v!r} reads as 'SIPO', as the value {twin!r} does: no question can tell them apart (payment "
           "characterization)")


# --- the answer side: the blank group by the names the question and the conventions give it ---------------------------

TOL = {"rel_tol": 0.001, "abs_tol": 0.005}
BREAKDOWN = {"task_id": "t", "question": "", "answer_format": {"type": "breakdown", "key": "k_symbol"},
             "gold": [{"k_symbol": " ", "value": 96.0}, {"k_symbol": None, "value": 182.0},
                      {"k_symbol": "SIPO", "value": 20.0}], "tolerance": TOL}
COMPARISON = {"task_id": "t", "question": "", "answer_format": {"type": "comparison", "key": "k_symbol"},
              "gold": {"group_a": " ", "group_b": None, "value_a": 96.0, "value_b": 182.0, "higher": None},
              "tolerance": TOL}
BLANK_NAMES = (" ", "", "' '", "blank", "Blank", "(blank)", "the blank payment characterization (' ')", "blank (' ')",
               "(' ')")
NULL_NAMES = ("NULL", "null", "payment characterization not recorded (NULL)", "not recorded")


@pytest.mark.parametrize("blank", BLANK_NAMES)
@pytest.mark.parametrize("null", NULL_NAMES)
def test_a_breakdown_s_blank_and_null_groups_by_their_question_names(blank, null):
    assert compare(BREAKDOWN, {blank: 96, null: 182, "SIPO": 20}).correct, (blank, null)
    assert not compare(BREAKDOWN, {blank: 182, null: 96, "SIPO": 20}).correct, (blank, null)


@pytest.mark.parametrize("blank", BLANK_NAMES)
def test_a_comparison_names_its_blank_group_as_the_question_does(blank):
    null = "payment characterization not recorded (NULL)"
    answer = {"group_a": blank, "value_a": 96, "group_b": null, "value_b": 182, "higher": null}
    assert compare(COMPARISON, answer).correct, compare(COMPARISON, answer)
    assert not compare(COMPARISON, {**answer, "higher": blank}).correct


def test_a_group_that_is_named_blank_keeps_its_name():
    """A category spelled "blank" is that category, not the blank one; "' '" is still the blank one."""
    gold = [{"k": " ", "value": 1.0}, {"k": "blank", "value": 2.0}]
    task = {**BREAKDOWN, "answer_format": {"type": "breakdown", "key": "k"}, "gold": gold}
    assert compare(task, {"' '": 1, "blank": 2}).correct
    assert not compare(task, {"' '": 2, "blank": 1}).correct


def test_a_missing_blank_group_is_named_by_its_literal():
    verdict = compare(BREAKDOWN, {"NULL": 182, "SIPO": 20})
    assert not verdict.correct and "' '" in verdict.reason, verdict.reason


# --- a slice on another table's column --------------------------------------------------------------------------------


@pytest.mark.parametrize(("metric", "dimension", "entity"), [
    ("revenue_per_order", "model.p.sellers.seller_state", "order_id"),  # an order has many sellers
    ("revenue_per_order", "model.p.customers.customer_state", None),  # an order has one customer
    ("revenue_per_order", "model.p.orders.order_status", None),  # the order's own column
    ("avg_item_price", "model.p.sellers.seller_state", None),  # no count per entity: the items themselves
    ("active_sellers", "model.p.customers.customer_state", None),  # a count of sellers alone reads alike
    ("gmv_per_active_seller", "model.p.customers.customer_state", "active_seller_id"),  # a composite's component
    ("gmv_per_active_seller", "model.p.sellers.seller_state", None),
    ("overdraft_rate", "model.p.trans.k_symbol", None),
])
def test_when_a_slice_s_two_readings_differ(metric, dimension, entity):
    assert entity_of_other_rows(metric, dimension, CATALOG) == entity


def test_the_conventions_say_which_rows_a_slice_on_another_table_keeps():
    section = "\n".join(conventions_section())
    item = CONVENTION_ITEMS["A slice on another table's column"]
    assert f"- **A slice on another table's column.** {item}" in section
    assert "not the whole of every order that has an RJ seller" in item
    blank = CONVENTION_ITEMS["Blank versus NULL categories"]
    assert "\"the blank payment characterization (' ')\"" in blank
    assert "\"payment characterization not recorded (NULL)\"" in blank


def test_an_llm_phraser_is_handed_the_same_words():
    """The LLM's scope names the value as the template does, and hands it the sentence on which rows count."""
    from dptool.generate.llm_phrase import scope

    window = {"start": "1997-10-01", "end": "1998-01-01", "label": "Q4 1997"}
    blank = {"analysis_type": "point_query", "metric_ids": ["overdraft_rate"], "dimension": "k_symbol",
             "slice": {"window": window, "k_symbol": " "}}
    assert scope(blank, CATALOG) == "Overdraft Rate for the blank payment characterization (' ') in Q4 1997"
    groups = {**blank, "analysis_type": "comparison", "slice": {"window": window, "groups": [None, "SIPO"]}}
    assert scope(groups, CATALOG) == ("Overdraft Rate of payment characterization not recorded (NULL) versus "
                                      "payment characterization SIPO, in Q4 1997")
    seller = {"analysis_type": "point_query", "metric_ids": ["revenue_per_order"], "dimension": "seller_state",
              "slice": {"window": window, "seller_state": "RJ"}}
    assert scope(seller, CATALOG) == ("Revenue per Order for seller state RJ in Q4 1997; say: \"Count only the order "
                                      "items whose seller state is RJ, not all the order items of every order that "
                                      "has one.\"")
