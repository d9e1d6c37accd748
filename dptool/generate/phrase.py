"""Stage 7: questions phrased backward from the answers — the deterministic template phraser.

A question names the metric, the slice and the window as a stakeholder would; it never names a
table, a column or the document that governs the answer.
"""

from __future__ import annotations

import re
from decimal import Decimal

from dptool.generate.enrich import TREND_RULE
from dptool.generate.instantiate import Candidate, rule_scope
from dptool.generate.slices import entity_noun, entity_of_other_rows
from dptool.generate.values import is_value, said
from dptool.generate.values import spoken as spoken
from dptool.project.catalog import Catalog
from dptool.project.selects import selections


def plural(noun: str) -> str:
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def rows_of(grain: str) -> str:
    """A metric's row grain as counted rows: "order item" (a semantic model's name) reads "order items"."""
    words = grain.split()
    if not words or words[-1].endswith("s"):
        return grain
    return " ".join([*words[:-1], plural(words[-1])])


def _is_plural(label: str) -> bool:
    """A label whose last word reads as a plural ("Orders", "Gross Billings"), not "Net Loss" or "Status"."""
    last = label.split()[-1] if label.split() else ""
    return last.endswith("s") and not last.endswith(("ss", "us", "is")) and last[:1].isalpha()


# a column name's suffix that says it is a dimension ("order_total_dim"): a stakeholder never says it
_DIMENSION_SUFFIX = re.compile(r"\s+(?:dim|dimension)$", re.IGNORECASE)


def dimension_label(label: str) -> str:
    """A dimension as a question names it: "order total dim" reads "order total"."""
    return _DIMENSION_SUFFIX.sub("", label) or label


def format_number(value: float, fmt: str, unit: str) -> str:
    """A number as a question states it, exactly: a threshold must read as the value it is."""
    exact = Decimal(repr(value))
    if fmt == "percent":
        return f"{_plain(exact * 100)}%"
    if fmt == "currency":
        text = format(exact, ",f") if -exact.as_tuple().exponent > 2 else f"{exact:,.2f}"
        return f"R$ {text}" if unit == "BRL" else f"{text} {unit}".strip()
    return f"{_plain(exact)} {unit}".strip()


def _plain(d: Decimal) -> str:
    # no exponent, no trailing zeros: 8.0 -> "8", 12.345650 -> "12.34565"
    text = format(d.normalize(), "f")
    return text


def answer_hint(fmt: str, unit: str) -> str:
    if fmt == "percent":
        return "Give the answer as a percentage."
    if unit:
        return f"Give the answer in {unit}."
    return ""


def phrase(c: Candidate, task: dict, catalog: Catalog) -> str:
    """The question of a task, from its candidate and its computed answer."""
    metric = catalog.metrics[c.metric]
    dim = catalog.dimensions[c.skeleton.dimension]
    label = dimension_label(dim.label)
    window = f"in {c.window.label}" if c.window else "over the whole history"
    subject = f"our {metric.label}"
    condition = ""
    if c.dimension_column in c.slice:
        condition = f" for {said(label, c.slice[c.dimension_column])}"
    hint = answer_hint(metric.format, metric.unit)
    if c.analysis_type == "point_query":
        was = "were" if _is_plural(metric.label) else "was"  # "What were our Orders", not "What was our Orders"
        text = f"What {was} {subject}{condition} {window}? {hint}"
    elif c.analysis_type == "ranking":
        text = (f"Among {plural(label)} with {at_least(c.min_rows, c.metric, catalog)} {window}"
                f"{counted(c.metric, c.rules, metric.grain, catalog)}{reportable(task, ' ')}, which {c.k} had the "
                f"highest {metric.label}? "
                "List them from highest to lowest with the value of each.")
    elif c.analysis_type == "trend_analysis":
        text = (f"How did {subject} develop month by month {window}{reportable(task, ', over the months ')}? "
                "Say whether it was increasing, decreasing "
                f"or flat ({TREND_RULE}), give the total change from the first to the last month in percent, and "
                "the month of its peak.")
    elif c.analysis_type == "comparison":
        a, b = (said(label, g) for g in c.slice["groups"])
        text = (f"{window[0].upper() + window[1:]}, which had the higher {metric.label}: {a} or {b}? "
                "Give the value of each.")
    elif c.analysis_type == "significance_testing":
        a, b = (said(label, g) for g in c.slice["groups"])
        text = (f"{window[0].upper() + window[1:]}, is the difference in {metric.label} between {a} "
                f"and {b} statistically significant at the 5% level? Use a two-tailed Welch's t-test "
                f"over the individual {rows_of(metric.grain)} and give the p-value.")
    elif c.analysis_type == "decomposition":
        groups = f"every {label}" if c.min_rows is None else \
            (f"every {label} with {at_least(c.min_rows, c.metric, catalog)}"
             f"{counted(c.metric, c.rules, metric.grain, catalog)}")
        lead = ", " if c.min_rows else " "
        text = (f"Break down {subject} by {label} {window}: give the value for {groups}{reportable(task, lead)}. "
                f"{hint}")
    elif c.analysis_type == "counterfactual":
        withdrawn = catalog.rules[c.slice["withdrawn_rule"]]
        text = (f"Suppose the policy \"{withdrawn.title}\" had never been adopted, with every other policy still "
                f"in force: what would {subject}{condition} have been {window}? {hint}")
    elif c.analysis_type == "threshold_crossing":
        threshold = format_number(task["gold"]["threshold"], metric.format, metric.unit)
        text = (f"Did {subject}{condition} {window} exceed {threshold}? "
                "Answer PASS if it did, FAIL if not, with the value.")
    else:
        raise ValueError(f"no template for {c.analysis_type!r}")
    return " ".join((text + own_rows(c, catalog) + selection_clause(c.metric, catalog) + scope(c, catalog)).split())


def own_rows(c: Candidate, catalog: Catalog) -> str:
    """The sentence (with a leading space) that says which rows a slice or a group on another table's column keeps,
    where the two readings differ (dptool.generate.slices): "Count only the order items whose seller state is RJ, not
    all the order items of every order that has one." "" elsewhere."""
    if c.skeleton.dimension_kind == "temporal":
        return ""
    return own_rows_sentence(c.metric, catalog.dimensions[c.skeleton.dimension], c.slice, catalog)


def own_rows_sentence(metric_id: str, dim, slice_: dict, catalog: Catalog) -> str:
    """`own_rows` of a metric, a `Dimension` and a slice (a task's)."""
    key = entity_of_other_rows(metric_id, dim.id, catalog)
    if key is None:
        return ""
    rows = rows_of(catalog.metrics[metric_id].grain)
    label = dimension_label(dim.label)
    whole = f"not all the {rows} of every {entity_noun(key)} that has one"
    if dim.column in slice_:
        return f" Count only the {rows} whose {label} is {is_value(slice_[dim.column])}, {whole}."
    return f" Count for each {label} only its own {rows}, {whole} of them."


def selection_clause(metric_id: str, catalog: Catalog) -> str:
    """" Take <members> as picked <window>." for each selection the metric's value rests on (its own and its
    components', `dptool.project.selects.selections`), with a leading space; "" for a metric that selects none.
    Without it, a top ten picked over the whole history and one picked in the period asked about are two answers."""
    return "".join(f" Take {s.members} as picked {s.window_text}." for s in selections(catalog, metric_id))


# what a listing question says when the rules in force remove some of its groups (a suppression of small groups,
# a policy that leaves a whole category out): it lists the groups that remain, and says so
REPORTABLE = "whose figure our policies allow to be reported"


def reportable(task: dict, lead: str) -> str:
    """`lead` + REPORTABLE when the task's rules remove a group, month or row its question would list
    (`task["support"]["removed"]`, dptool.generate.support), else "": a question never asks for what is removed."""
    if not ((task.get("support") or {}).get("removed")):
        return ""
    return f"{lead}{REPORTABLE}"


def at_least(n: int, metric_id: str, catalog: Catalog) -> str:
    """"at least 30 orders": the rows a ranking's group needs. A composite's gold counts them in each of the
    metrics it is computed from (its components', down to those that read rows), so each grain is named:
    "at least 30 delivered orders and at least 30 reviews", never one count over both."""
    leaves = [m for m in catalog.metric_tree(metric_id) if not catalog.metrics[m].components]
    grains = list(dict.fromkeys(catalog.metrics[m].grain for m in leaves)) or [catalog.metrics[metric_id].grain]
    return " and ".join(f"at least {n} {rows_of(g)}" for g in grains)


def counted(metric_id: str, rules, grain: str, catalog: Catalog) -> str:
    """When "at least N rows" is counted: the gold's `having count(*)` counts the rows its policies leave."""
    if not catalog.rules_of(metric_id):
        return ""
    if rules:
        return f" (counted after the policies have excluded any {rows_of(grain)})"
    return " (counted before any policy)"


def scope(c: Candidate, catalog: Catalog) -> str:
    """Which of the policies that govern the metric the answer applies, when not all of them: without it, two
    tasks on one metric and slice under different rule subsets would ask the same question with different
    golds. A task under all of them says nothing: finding and applying them is the test. A counterfactual
    states its scope itself (every policy but the one withdrawn).

    The policies that govern a composite include its components' (`Catalog.governing_rules`).
    """
    if c.analysis_type == "counterfactual":
        return ""
    governing = tuple(r.id for r in catalog.governing_rules(c.metric))
    return scope_sentence(rule_scope(c.rules, governing), c.rules, c.metric, catalog)


NO_POLICY = "before any policy adjusts it"
ONLY = "apply only"


def scope_sentence(rule_scope: str, rules, metric_id: str, catalog: Catalog) -> str:
    """The sentence a question ends with for a `subset` or `none` scope (with a leading space); "" for `all`."""
    composite = bool(catalog.metrics[metric_id].components)
    if rule_scope == "none":
        whose = " or its components" if composite else ""
        return f" Use the metric as the catalog defines it, {NO_POLICY}{whose}."
    if rule_scope == "subset":
        titles = " and ".join(f'"{catalog.rules[r].title}"' for r in rules)
        whose = "govern this metric and its components" if composite else "adjust this metric"
        return f" Of the policies that {whose}, {ONLY} {titles}."
    return ""
