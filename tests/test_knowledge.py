"""Knowledge-tier tasks: the governing passage of a rule document, its key facts, and the tasks built on them."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from dptool.answers import compare
from dptool.generate.ids import task_key
from dptool.generate.knowledge import (
    EFFECTIVE_DATE,
    MAX_FACTS,
    effective_date_task,
    effective_passage,
    governing_passage,
    key_facts,
    knowledge_tasks,
    metric_task,
    normalized,
    rule_task,
)
from dptool.generate.llm_phrase import answer_shape, scope
from dptool.generate.validate import identifiers, issues, validate
from dptool.project.catalog import load_catalog

FIXTURES = Path(__file__).parent / "fixtures"
SHOP = load_catalog(json.loads((FIXTURES / "shop_manifest.json").read_text(encoding="utf-8")))
BANNED = identifiers(SHOP)

POLICY = """# POL-SAL-004 Late returns

## 1. Purpose

This policy was last revised in 2016 and covers 27 states.

## 2. Rule

From **1 January 2018**, a return requested more than 60 days after delivery is **not refunded**;
a restocking fee of 12.5% applies to every other return (see version 2.0 of the handbook).

#### Note

The fee is waived for orders under 100 BRL.

## 3. Exceptions

None. Reviewed in 2019.
"""

PASSAGE = """From **1 January 2018**, a return requested more than 60 days after delivery is **not refunded**;
a restocking fee of 12.5% applies to every other return (see version 2.0 of the handbook).

#### Note

The fee is waived for orders under 100 BRL."""


# --- governing_passage ----------------------------------------------------------------------------------------------


def test_governing_passage():
    # the rule section without its heading, up to the next heading of level 1 to 3
    assert governing_passage(POLICY) == PASSAGE


def test_governing_passage_without_a_rule_heading():
    assert governing_passage("# Late returns\n\n## 1. Purpose\n\nReturns after 60 days are not refunded.\n") is None
    assert governing_passage("") is None
    # the shop's rule documents state their rule in prose, under no rule heading
    assert [governing_passage(r.document) for r in SHOP.rules.values()] == [None, None, None]


@pytest.mark.parametrize("heading", ["## 4. Rule", "## Rule", "## The rule", "### Core Rule", "## 4) The Rule",
                                     "## 4 RULE", "##Rule", "## 2. Rule (effective 2018)", "### The core rule"])
def test_rule_headings(heading):
    document = f"# Title\n\nIntro 5.\n\n{heading}\n\nReturns after 60 days are void.\n\n## Next\n\nMore 7."
    assert governing_passage(document) == "Returns after 60 days are void."


@pytest.mark.parametrize("heading", ["# Rule", "#### Rule", "## Rules of thumb", "## Ruleset", "## Scope of the rule",
                                     "## 4. Ruling", "Rule"])
def test_not_rule_headings(heading):
    document = f"# Title\n\n{heading}\n\nReturns after 60 days are void.\n"
    assert governing_passage(document) is None


def test_rule_section_to_the_end_of_the_document():
    assert governing_passage("# T\n\n## Rule\n\n  Orders over 100 BRL are flagged.  \n\n") == (
        "Orders over 100 BRL are flagged.")


def test_empty_rule_section():
    assert governing_passage("# T\n\n## Rule\n\n\n## Exceptions\n\nNone.") is None
    assert governing_passage("# T\n\n## Rule\n") is None


def test_first_rule_heading_wins():
    document = "# T\n\n## Rule\n\nFirst: 10 days.\n\n## The rule, again\n\nSecond: 20 days."
    assert governing_passage(document) == "First: 10 days."


# --- key_facts ------------------------------------------------------------------------------------------------------


def test_key_facts_of_the_passage():
    # dates as ISO, numbers (with % when the text says so), then short bold terms; "version 2.0" is no fact;
    # the bold date holds a number: the date is the fact, not the bold term
    assert key_facts(PASSAGE) == ["2018-01-01", "60", "12.5%", "100", "not refunded"]


@pytest.mark.parametrize(("text", "facts"), [
    ("Effective 1 January 2018, returns are void.", ["2018-01-01"]),
    ("Effective 31 december 2019.", ["2019-12-31"]),
    ("Effective 2018-03-01 the clock starts at approval.", ["2018-03-01"]),
    ("Returns after 60 days are void.", ["60"]),
    ("A fee of 12.5% applies.", ["12.5%"]),
    ("A fee of 12.5 % applies.", ["12.5%"]),
    ("A fee of 3 per cent applies.", ["3%"]),
    ("A fee of 2,5% applies.", ["2.5%"]),  # a decimal comma
    ("A cap of 1,250 BRL.", ["1250"]),  # a thousands separator
    ("A cap of 0.95.", ["0.95"]),
    ("See version 2.0 of the handbook.", []),
    ("See Version 3 and v2 and v. 4 and v 5.", []),
    ("Orders are **canceled**.", ["canceled"]),
    ("Methods marked **\"Not  Defined.\"** are **excluded from payment analytics**.",
     ["not defined", "excluded from payment analytics"]),
    ("Orders are **excluded when the payment method is unknown**.", []),  # five words: no term
    ("Orders over **60 days** late are void.", ["60"]),  # the number is the fact
    ("Returns after 60 days, or 60 days after delivery, are void.", ["60"]),
    ("Scores 4 or 5 (out of 5) are satisfied.", ["4", "5"]),
    ("Nothing to check here.", []),
    # a number that points elsewhere in the document, or numbers a list item, is no fact
    ("The indicators listed in section 2 exclude postings of 30 days.", ["30"]),
    ("See sections 4 and § 5: 60 days.", ["60"]),
    ("A seller is active if:\n\n1. the seller sold **at least one item**; and\n2) the score is at least 3.0.",
     ["3.0", "at least one item"]),
    ("- 1. first\n 12.5% of the fee is refunded.", ["12.5%"]),
    # a month and year keep the month; a US-style date keeps its day; neither is read as a bare year
    ("Invoices issued from July 2024 are spread monthly.", ["2024-07"]),
    ("Since March, 2023 the cap is 40.", ["2023-03", "40"]),
    ("Effective July 1, 2024 and from 1 August 2024.", ["2024-08-01", "2024-07-01"]),
])
def test_key_facts(text, facts):
    assert key_facts(text) == facts


def test_key_facts_keep_the_first_six():
    assert MAX_FACTS == 6
    assert key_facts("Tiers at 1, 2, 3, 4, 5, 6, 7 and 8 orders, from 2 March 2017.") == [
        "2017-03-02", "1", "2", "3", "4", "5"]


def test_key_facts_millions():
    assert key_facts("Orders over 1,250,000 BRL are reviewed.") == ["1250000"]


# --- tasks ----------------------------------------------------------------------------------------------------------


def with_document(rule_id: str, document: str, **changes):
    return replace(SHOP.rules[rule_id], document=document, **changes)


def test_rule_task():
    rule = with_document("capital_override", POLICY)
    assert rule_task(rule, SHOP) == {
        "task_id": "",
        "domain": "sales",
        "analysis_type": "knowledge_retrieval",
        "tier": "knowledge",
        "question": "According to company policy on Capital District Override, what changes in how we calculate "
                    "Average Order Value? State the exact thresholds, dates and conditions that apply.",
        "answer_format": {"type": "knowledge"},
        "gold": {"passage": PASSAGE, "facts": ["2018-01-01", "60", "12.5%", "100", "not refunded"]},
        "base": None,
        "tolerance": {"rel_tol": 0.0, "abs_tol": 0.0},
        "gold_sql": None,
        "base_sql": None,
        "metric_ids": ["avg_order_value"],
        "rule_ids": ["capital_override"],
        "rule_types": ["override"],
        "dimension": None,
        "slice": {},
        "subgraph_id": "rule:capital_override",
        "dbt_node": "macro.shop.rule__capital_override",
    }


@pytest.mark.parametrize(("modifies", "subject"), [
    (("paid_rate",), "Paid Rate"),
    (("avg_order_value", "paid_rate"), "Average Order Value and Paid Rate"),
    (("paid_rate", "avg_order_value", "paid_rate"), "Paid Rate, Average Order Value and Paid Rate"),
])
def test_rule_task_names_every_metric(modifies, subject):
    rule = with_document("exclude_tests", POLICY, modifies=modifies)
    task = rule_task(rule, SHOP)
    assert task["question"].startswith(
        f"According to company policy on Test Order Exclusion, what changes in how we calculate {subject}? ")
    assert task["metric_ids"] == list(modifies)


def test_rule_task_needs_a_rule_with_facts():
    assert rule_task(SHOP.rules["exclude_tests"], SHOP) is None  # no rule heading
    no_facts = "# Test orders\n\n## Rule\n\nOrders placed by the **quality assurance team and its contractors**."
    assert rule_task(with_document("exclude_tests", no_facts), SHOP) is None
    bold = "# Test orders\n\n## Rule\n\nOrders placed by the QA team are **excluded**."
    assert rule_task(with_document("exclude_tests", bold), SHOP)["gold"]["facts"] == ["excluded"]


def test_metric_task():
    metric = replace(SHOP.metrics["paid_rate"], formula="COUNT(orders paid within 30 days) / COUNT(orders) * 100")
    task = metric_task(metric)
    assert task["question"] == ("How is Paid Rate defined in our metric catalog? Give its formula with every "
                                "constant in it.")
    assert task["gold"] == {"passage": "Paid Rate: COUNT(orders paid within 30 days) / COUNT(orders) * 100",
                            "facts": ["30", "100"]}
    assert (task["metric_ids"], task["rule_ids"], task["rule_types"]) == (["paid_rate"], [], [])
    assert (task["subgraph_id"], task["dbt_node"], task["domain"]) == (
        "metric:paid_rate", "model.shop.paid_rate", "sales")
    # the shop's formulas hold no constant
    assert [metric_task(m) for m in SHOP.metrics.values()] == [None, None]


def test_knowledge_tasks_in_id_order_and_valid():
    catalog = replace(SHOP, rules={
        **SHOP.rules,
        "paid_definition": with_document("paid_definition", "# Paid\n\n## Rule\n\nPaid after 2 days.\n"),
        "capital_override": with_document("capital_override", POLICY),
    }, metrics={**SHOP.metrics,
                "avg_order_value": replace(SHOP.metrics["avg_order_value"], formula="AVG(amount) over 0.5 BRL")})
    tasks = knowledge_tasks(catalog)
    # rules by id (exclude_tests has no rule section), then metrics by id (paid_rate has no constant)
    assert [t["subgraph_id"] for t in tasks] == ["rule:capital_override", "rule:paid_definition",
                                                 "metric:avg_order_value"]
    for i, task in enumerate(tasks, start=1):
        task["task_id"] = f"k_{i:04d}"
        assert issues(task, catalog, BANNED) == []
    kept, rejected = validate(tasks, catalog)
    assert (len(kept), sum(rejected.values())) == (3, 0)


def test_knowledge_tasks_of_the_shop():
    assert knowledge_tasks(SHOP) == []


# --- the effective date ---------------------------------------------------------------------------------------------

HEADED = """# POL-SAL-004 Late returns

| Field | Value |
|---|---|
| Document ID | POL-SAL-004 |
| Effective date | 1 March 2017 (version 2.0) |

Revision 1.0 of 1 January 2016 was replaced. Effective 1 March 2017, returns after 60 days are void.

## Rule

Returns after 60 days are void.
"""


def test_effective_passage_is_the_line_that_states_the_effective_date():
    rule = with_document("capital_override", HEADED)  # effective_from 2017-03-01
    # the labelled line wins over the prose, and is kept as written
    assert effective_passage(rule) == "| Effective date | 1 March 2017 (version 2.0) |"
    prose = HEADED.replace("| Effective date | 1 March 2017 (version 2.0) |\n", "")
    assert effective_passage(with_document("capital_override", prose)) == (
        "Revision 1.0 of 1 January 2016 was replaced. Effective 1 March 2017, returns after 60 days are void.")
    # another date, a date without "effective", or no effective_from in the properties: nothing stated
    assert effective_passage(with_document("capital_override", HEADED, effective_from="2017-03-02")) is None
    assert effective_passage(with_document("capital_override", "# T\n\nFrom 1 March 2017 on.\n")) is None
    assert effective_passage(with_document("capital_override", HEADED, effective_from="")) is None
    assert effective_passage(with_document("capital_override", "Effective date: 2017-03-01")) == (
        "Effective date: 2017-03-01")


def test_effective_date_task():
    task = effective_date_task(with_document("capital_override", HEADED), SHOP)
    assert task["question"] == ("What is the effective date of company policy on Capital District Override? Give the "
                                "exact date.")
    assert task["gold"] == {"passage": "| Effective date | 1 March 2017 (version 2.0) |", "facts": ["2017-03-01"]}
    assert task["answer_format"] == {"type": "knowledge", "asks": EFFECTIVE_DATE}
    assert (task["rule_ids"], task["rule_types"], task["metric_ids"], task["subgraph_id"]) == (
        ["capital_override"], ["override"], ["avg_order_value"], "rule:capital_override")
    assert issues(task, SHOP, BANNED) == []
    # the date in any form an answer writes it, and no other
    for answer in ("It took effect on March 1, 2017.", "1 March 2017", "2017-03-01", "01/03/2017"):
        assert compare(task, answer).correct, answer
    for answer in ("2017-03-02", "March 2017", "2018-03-01"):
        assert not compare(task, answer).correct, answer
    assert compare(task, task["gold"]["passage"]).correct
    assert effective_date_task(SHOP.rules["exclude_tests"], SHOP) is None  # its document states no date


def test_the_two_tasks_of_one_rule_are_told_apart_by_refresh_and_the_llm_stages():
    rule = with_document("capital_override", HEADED)
    what, when = rule_task(rule, SHOP), effective_date_task(rule, SHOP)
    assert task_key(what) != task_key(when)
    assert task_key(what) == task_key({**what, "answer_format": {"type": "knowledge"}})  # old bundles keep their ids
    catalog = replace(SHOP, rules={**SHOP.rules, "capital_override": rule})
    assert "Capital District Override" in scope(what, catalog) and "Capital District Override" in scope(when, catalog)
    assert scope(what, catalog) != scope(when, catalog)
    assert answer_shape(when, catalog) == "the exact date the policy takes effect"


# --- every question reads differently ------------------------------------------------------------------------------


def _rules_on_one_metric(**changes):
    """Two rules that change Average Order Value, each with a rule section and an effective date."""
    other = {"document": HEADED.replace("1 March 2017", "1 January 2017").replace("60 days", "90 days"),
             **changes.get("exclude_tests", {})}  # exclude_tests is effective from 2017-01-01
    rules = {**SHOP.rules,
             "capital_override": with_document("capital_override", HEADED),
             "exclude_tests": with_document("exclude_tests", **other)}
    return replace(SHOP, rules=rules)


def test_two_rules_on_one_metric_ask_two_questions():
    # the flaw this fixes: both rules asked "According to company policy, what changes in how we calculate
    # Average Order Value? ...", one question with two golds
    tasks = knowledge_tasks(_rules_on_one_metric())
    assert [(t["subgraph_id"], t["answer_format"].get("asks")) for t in tasks] == [
        ("rule:capital_override", None), ("rule:capital_override", EFFECTIVE_DATE),
        ("rule:exclude_tests", None), ("rule:exclude_tests", EFFECTIVE_DATE)]
    assert [t["question"] for t in tasks] == [
        "According to company policy on Capital District Override, what changes in how we calculate Average Order "
        "Value? State the exact thresholds, dates and conditions that apply.",
        "What is the effective date of company policy on Capital District Override? Give the exact date.",
        "According to company policy on Test Order Exclusion, what changes in how we calculate Average Order "
        "Value? State the exact thresholds, dates and conditions that apply.",
        "What is the effective date of company policy on Test Order Exclusion? Give the exact date.",
    ]


def test_rules_of_one_title_are_told_apart_by_type_then_by_date():
    # the same title, written differently: a reader cannot tell them apart, so the type is named
    catalog = _rules_on_one_metric(exclude_tests={"title": "capital-district OVERRIDE"})
    questions = [t["question"] for t in knowledge_tasks(catalog)]
    assert questions[0].startswith("According to company policy on Capital District Override (an override rule), ")
    assert questions[2].startswith("According to company policy on capital-district OVERRIDE (an exclusionary rule), ")
    assert questions[1] == ("What is the effective date of company policy on Capital District Override (an override "
                            "rule)? Give the exact date.")
    # the same type as well: the date it takes effect tells the two rule tasks apart, the metrics cannot tell the
    # two date tasks apart, which are dropped
    catalog = _rules_on_one_metric(exclude_tests={"title": "Capital District Override", "type": "override"})
    tasks = knowledge_tasks(catalog)
    assert [t["question"] for t in tasks] == [
        "According to company policy on Capital District Override (an override rule, in effect from 1 March 2017), "
        "what changes in how we calculate Average Order Value? State the exact thresholds, dates and conditions "
        "that apply.",
        "According to company policy on Capital District Override (an override rule, in effect from 1 January 2017), "
        "what changes in how we calculate Average Order Value? State the exact thresholds, dates and conditions "
        "that apply.",
    ]


def test_rules_of_one_title_on_other_metrics_are_told_apart_by_their_metrics():
    catalog = _rules_on_one_metric(exclude_tests={"title": "Capital District Override", "type": "override",
                                                  "modifies": ("paid_rate",)})
    questions = [t["question"] for t in knowledge_tasks(catalog) if t["answer_format"].get("asks")]
    assert questions == [
        "What is the effective date of company policy on Capital District Override (an override rule), which "
        "changes how we calculate Average Order Value? Give the exact date.",
        "What is the effective date of company policy on Capital District Override (an override rule), which "
        "changes how we calculate Paid Rate? Give the exact date.",
    ]


def test_questions_that_read_the_same_with_the_same_gold_are_kept_once():
    same = _rules_on_one_metric(exclude_tests={"title": "Capital District Override", "type": "override",
                                               "effective_from": "2017-03-01", "document": HEADED})
    tasks = knowledge_tasks(same)
    assert [t["rule_ids"] for t in tasks] == [["capital_override"], ["capital_override"]]


def test_normalized_questions():
    assert normalized("São Paulo's  Approval-Clock?") == normalized("sao paulo s approval clock") == (
        "sao paulo s approval clock")


# --- the demo project: both domains ---------------------------------------------------------------------------------


def test_demo_knowledge_tasks_ask_distinct_questions(demo_catalog):
    tasks = knowledge_tasks(demo_catalog)
    assert {t["domain"] for t in tasks} == set(demo_catalog.domains) == {"banking", "ecommerce"}
    questions = [t["question"] for t in tasks]
    assert len(set(questions)) == len(questions)
    assert len({normalized(q) for q in questions}) == len(questions)
    # every rule document gives a task on what it changes or when it takes effect (every one states its date)
    assert {r for t in tasks for r in t["rule_ids"]} == set(demo_catalog.rules)
    dated = [t["rule_ids"][0] for t in tasks if t["answer_format"].get("asks") == EFFECTIVE_DATE]
    assert sorted(dated) == sorted(demo_catalog.rules)
    # every metric whose formula holds a constant gives one
    assert sorted(t["metric_ids"][0] for t in tasks if not t["rule_ids"]) == sorted(
        m.id for m in demo_catalog.metrics.values() if key_facts(m.formula))
    banned = identifiers(demo_catalog)
    for task in tasks:
        assert issues(task, demo_catalog, banned) == [], task["question"]
        if task["rule_ids"]:  # grounded: the passage stands in the document, and holds every fact
            assert task["gold"]["passage"] in demo_catalog.rules[task["rule_ids"][0]].document
        assert compare(task, task["gold"]["passage"]).correct, task["question"]
    assert knowledge_tasks(demo_catalog) == tasks  # deterministic


@pytest.mark.parametrize("formula", ["SUM(1)", "sum(1) over orders", "COUNT(1)", "count( distinct 1 )"])
def test_a_row_count_s_1_is_no_fact(formula):
    """Issue 28: a count metric of the semantic layer (`expr: 1`) was asked for the fact "1"."""
    assert metric_task(replace(SHOP.metrics["paid_rate"], formula=formula)) is None
    kept = metric_task(replace(SHOP.metrics["paid_rate"], formula=f"{formula} where amount > 10"))
    assert kept["gold"]["facts"] == ["10"]


@pytest.mark.parametrize(("document", "expected"), [
    ("# Exclude tests\n\n## Rule\n\nx", "# Exclude tests\n\n## Rule\n\nx"),  # headed by its title: kept
    ("## Rule\n\nx", "# Exclude tests\n\n## Rule\n\nx"),
    # a heading of its own: one top-level heading still, the title; its own one level down (code left alone)
    ("# Test accounts policy\n\n## Rule\n\nx\n\n```\n# a comment\n```",
     "# Exclude tests\n\n## Test accounts policy\n\n## Rule\n\nx\n\n```\n# a comment\n```"),
])
def test_a_rule_document_has_one_top_level_heading(document, expected):
    from dptool.generate.export import titled

    rule = replace(next(iter(SHOP.rules.values())), title="Exclude tests", document=document)
    text = titled(rule)
    assert text == expected
    assert sum(1 for line in text.splitlines() if line.startswith("# ")) == 1 + text.count("# a comment")
