"""Knowledge-tier tasks: questions answered by the rule documents and the metric catalog alone.

The gold is the governing passage plus the key facts in it (numbers, dates, thresholds) that a scorer
can check in an answer.
"""

from __future__ import annotations

import re
from datetime import datetime

from dptool.catalog import Catalog, Metric, Rule

# the section of a rule document that states the rule: "## 4. Rule", "## The rule", "## 4. The Rule"
_RULE_HEADING = re.compile(r"^#{2,3}\s*(?:\d+[.)]?\s*)?(?:the\s+)?(?:core\s+)?rule\b.*$", re.IGNORECASE | re.MULTILINE)
_HEADING = re.compile(r"^#{1,3}\s", re.MULTILINE)
_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december"]
_BOLD = re.compile(r"\*\*([^*]+?)\*\*")
_VERSION = re.compile(r"\b(?:version|v\.?)\s*$", re.IGNORECASE)
_DATE = re.compile(r"\b(\d{1,2}) (" + "|".join(_MONTHS) + r") (\d{4})\b", re.IGNORECASE)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?)(\s?%|\s?per\s?cent)?(?![\w])")
MAX_FACTS = 6


def governing_passage(document: str) -> str | None:
    """The rule section of a rule document, without its heading; None when it has none."""
    match = _RULE_HEADING.search(document)
    if not match:
        return None
    start = match.end()
    following = _HEADING.search(document, start)
    body = document[start:following.start() if following else len(document)]
    body = "\n".join(line for line in body.strip().splitlines())
    return body.strip() or None


def key_facts(passage: str) -> list[str]:
    """Dates (ISO) and numbers (with % when the text says so) a correct answer must state, in order."""
    facts: list[str] = []
    spans: list[tuple[int, int]] = []
    for m in _DATE.finditer(passage):
        day, month, year = int(m.group(1)), _MONTHS.index(m.group(2).lower()) + 1, int(m.group(3))
        facts.append(datetime(year, month, day).date().isoformat())
        spans.append(m.span())
    for m in _ISO_DATE.finditer(passage):
        facts.append(m.group(0))
        spans.append(m.span())
    for m in _NUMBER.finditer(passage):
        if any(a <= m.start() < b for a, b in spans) or _VERSION.search(passage[max(0, m.start() - 9):m.start()]):
            continue
        text = m.group(1)
        # "12,5" is a decimal comma; "1,250,000" and "1,250" are thousands
        number = text.replace(",", ".") if text.count(",") == 1 and len(text.split(",")[1]) != 3 \
            else text.replace(",", "")
        facts.append(number + ("%" if m.group(2) else ""))
    # short emphasised terms ("canceled", "not defined") are facts too, where numbers are few
    for m in _BOLD.finditer(passage):
        term = " ".join(m.group(1).split()).strip(" .,:;\"'“”").lower()
        if 0 < len(term.split()) <= 4 and not _NUMBER.search(term):
            facts.append(term)
    unique = list(dict.fromkeys(facts))
    return unique[:MAX_FACTS]


def rule_task(rule: Rule, catalog: Catalog) -> dict | None:
    """A knowledge-retrieval task on one rule document, or None when the document has no checkable rule."""
    passage = governing_passage(rule.document)
    if not passage:
        return None
    facts = key_facts(passage)
    if not facts:
        return None
    labels = [catalog.metrics[m].label for m in rule.modifies]
    subject = labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]
    question = (f"According to company policy, what changes in how we calculate {subject}? "
                "State the exact thresholds, dates and conditions that apply.")
    return _task(rule.domain, question, passage, facts, list(rule.modifies), [rule.id], [rule.type],
                 f"rule:{rule.id}", rule.unique_id)


def metric_task(metric: Metric) -> dict | None:
    """A knowledge-retrieval task on a metric catalog entry whose formula holds checkable numbers."""
    passage = f"{metric.label}: {metric.formula}"
    facts = key_facts(metric.formula)
    if not facts:
        return None
    question = f"How is {metric.label} defined in our metric catalog? Give its formula with every constant in it."
    return _task(metric.domain, question, passage, facts, [metric.id], [], [], f"metric:{metric.id}",
                 metric.unique_id)


def _task(domain, question, passage, facts, metric_ids, rule_ids, rule_types, subgraph, node) -> dict:
    return {
        "task_id": "",
        "domain": domain,
        "analysis_type": "knowledge_retrieval",
        "tier": "knowledge",
        "question": question,
        "answer_format": {"type": "knowledge"},
        "gold": {"passage": passage, "facts": facts},
        "base": None,
        "tolerance": {"rel_tol": 0.0, "abs_tol": 0.0},
        "gold_sql": None,
        "base_sql": None,
        "metric_ids": metric_ids,
        "rule_ids": rule_ids,
        "rule_types": rule_types,
        "dimension": None,
        "slice": {},
        "subgraph_id": subgraph,
        "dbt_node": node,
    }


def knowledge_tasks(catalog: Catalog) -> list[dict]:
    """Every rule document and metric catalog entry that makes a checkable knowledge task, in id order."""
    tasks = [t for r in sorted(catalog.rules.values(), key=lambda r: r.id) if (t := rule_task(r, catalog))]
    tasks += [t for m in sorted(catalog.metrics.values(), key=lambda m: m.id) if (t := metric_task(m))]
    return tasks
