"""Knowledge-tier tasks: questions answered by the rule documents and the metric catalog alone.

The gold is the governing passage plus the key facts in it (numbers, dates, thresholds) that a scorer
can check in an answer. A rule document gives up to two tasks, one per family of facts: what its rule
section changes (every key fact of that section), and the date it takes effect (the line of the document
that states `effective_from`); a metric catalog entry gives one when its formula holds a constant.
Every question names what sets its rule apart (the rule's title, then its type, then its date or metrics
where titles coincide), so that no two questions of a bundle read the same.
"""

from __future__ import annotations

import contextlib
import json
import re
import unicodedata
from datetime import date, datetime

from dptool.project.catalog import Catalog, Metric, Rule

# the section of a rule document that states the rule: "## 4. Rule", "## The rule", "## 4. The Rule"
_RULE_HEADING = re.compile(r"^#{2,3}\s*(?:\d+[.)]?\s*)?(?:the\s+)?(?:core\s+)?rule\b.*$", re.IGNORECASE | re.MULTILINE)
_HEADING = re.compile(r"^#{1,3}\s", re.MULTILINE)
_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december"]
_BOLD = re.compile(r"\*\*([^*]+?)\*\*")
_VERSION = re.compile(r"\b(?:version|v\.?)\s*$", re.IGNORECASE)
# a number that points elsewhere in the document ("section 2", "§ 4") or numbers a list item ("1. Volume")
_REFERENCE = re.compile(r"(?:\b(?:sections?|chapters?|articles?|appendix|clauses?)|§)\s*$", re.IGNORECASE)
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?\d+[.)][ \t]+", re.MULTILINE)
_DATE = re.compile(r"\b(\d{1,2}) (" + "|".join(_MONTHS) + r") (\d{4})\b", re.IGNORECASE)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_US_DATE = re.compile(r"\b(" + "|".join(_MONTHS) + r") (\d{1,2}),? (\d{4})\b", re.IGNORECASE)  # July 1, 2024
_MONTH_YEAR = re.compile(r"\b(" + "|".join(_MONTHS) + r"),? (\d{4})\b", re.IGNORECASE)  # July 2024
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?)(\s?%|\s?per\s?cent)?(?![\w])")
_EFFECTIVE = re.compile(r"\beffective\b", re.IGNORECASE)
_EFFECTIVE_LABEL = re.compile(r"\beffective\s*(?:date|from|as of|since)\b", re.IGNORECASE)
_ROW_COUNT = re.compile(r"\b(?:sum|count)\s*\(\s*(?:distinct\s+)?1\s*\)", re.IGNORECASE)
MAX_FACTS = 6
EFFECTIVE_DATE = "effective_date"  # answer_format.asks of a task on the date a rule takes effect


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


def _dates(text: str) -> list[tuple[str, tuple[int, int]]]:
    """The dates written in a text ("1 January 2018", "January 1, 2018", "2018-01-01") as ISO dates, and the
    months ("from July 2024") as YYYY-MM, with where they stand, in the order they are written."""
    found = []

    def whole(m, day: int, month: str, year: int) -> None:
        with contextlib.suppress(ValueError):  # "31 February 2018" is no date
            found.append((date(year, _MONTHS.index(month.lower()) + 1, day).isoformat(), m.span()))

    for m in _DATE.finditer(text):
        whole(m, int(m.group(1)), m.group(2), int(m.group(3)))
    found += [(m.group(0), m.span()) for m in _ISO_DATE.finditer(text)]
    for m in _US_DATE.finditer(text):
        whole(m, int(m.group(2)), m.group(1), int(m.group(3)))
    taken = [span for _, span in found]
    for m in _MONTH_YEAR.finditer(text):  # a month and year that are no part of a whole date: the month is the fact
        if not any(a <= m.start() < b or a < m.end() <= b for a, b in taken):
            found.append((f"{int(m.group(2))}-{_MONTHS.index(m.group(1).lower()) + 1:02d}", m.span()))
    return found


def key_facts(passage: str) -> list[str]:
    """Dates (ISO) and numbers (with % when the text says so) a correct answer must state, in order."""
    found = _dates(passage)
    facts: list[str] = [d for d, _ in found]
    spans: list[tuple[int, int]] = [span for _, span in found]
    spans += [m.span() for m in _LIST_ITEM.finditer(passage)]
    for m in _NUMBER.finditer(passage):
        before = passage[max(0, m.start() - 12):m.start()]
        if any(a <= m.start() < b for a, b in spans) or _VERSION.search(before) or _REFERENCE.search(before):
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
    return _task(rule.domain, _rule_questions(rule, catalog)[0], passage, facts, list(rule.modifies), [rule.id],
                 [rule.type], f"rule:{rule.id}", rule.unique_id)


def effective_passage(rule: Rule) -> str | None:
    """The line of a rule document that states its effective date (`effective_from`), or None when none does.

    A line that labels it ("Effective date | 1 July 2016", "Effective from 1 July 2016") wins over one that
    only mentions it; the line is kept as written, so that it is found in the document.
    """
    if not rule.effective_from:
        return None
    lines = [line.strip() for line in rule.document.splitlines()
             if _EFFECTIVE.search(line) and rule.effective_from in (d for d, _ in _dates(line))]
    labelled = [line for line in lines if _EFFECTIVE_LABEL.search(line)]
    return (labelled or lines or [None])[0]


def effective_date_task(rule: Rule, catalog: Catalog) -> dict | None:
    """A knowledge-retrieval task on the date a rule document says it takes effect, or None when it says none."""
    passage = effective_passage(rule)
    if passage is None:
        return None
    task = _task(rule.domain, _effective_questions(rule, catalog)[0], passage, [rule.effective_from],
                 list(rule.modifies), [rule.id], [rule.type], f"rule:{rule.id}", rule.unique_id)
    task["answer_format"]["asks"] = EFFECTIVE_DATE
    return task


def metric_task(metric: Metric) -> dict | None:
    """A knowledge-retrieval task on a metric catalog entry whose formula holds checkable numbers."""
    passage = f"{metric.label}: {metric.formula}"
    # a row count written SUM(1) or COUNT(1) (a semantic-layer measure of `expr: 1`) states no fact: its 1 is no
    # constant of the definition an agent could be asked for
    facts = key_facts(_ROW_COUNT.sub("count of rows", metric.formula))
    if not facts:
        return None
    return _task(metric.domain, _metric_questions(metric)[0], passage, facts, [metric.id], [], [],
                 f"metric:{metric.id}", metric.unique_id)


# --- questions: the plainest wording first, then more specific ones for when two tasks would read the same ------


def _and(items: list[str]) -> str:
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


def _kind(rule: Rule) -> str:
    """"an exclusionary rule", "a privacy rule"."""
    return ("an " if rule.type[:1].lower() in tuple("aeiou") else "a ") + f"{rule.type} rule"


def _rule_questions(rule: Rule, catalog: Catalog) -> list[str]:
    subject = _and([catalog.metrics[m].label for m in rule.modifies])
    ask = f"what changes in how we calculate {subject}? State the exact thresholds, dates and conditions that apply."
    topic = f"company policy on {rule.title}"
    questions = [f"According to {topic}, {ask}", f"According to {topic} ({_kind(rule)}), {ask}"]
    if rule.effective_from:
        questions.append(f"According to {topic} ({_kind(rule)}, in effect from {_spoken_date(rule.effective_from)}), "
                         f"{ask}")
    return questions


def _effective_questions(rule: Rule, catalog: Catalog) -> list[str]:
    topic = f"company policy on {rule.title}"
    ask = "Give the exact date."
    subject = _and([catalog.metrics[m].label for m in rule.modifies]) if rule.modifies else ""
    questions = [f"What is the effective date of {topic}? {ask}",
                 f"What is the effective date of {topic} ({_kind(rule)})? {ask}"]
    if subject:
        questions.append(f"What is the effective date of {topic} ({_kind(rule)}), which changes how we calculate "
                         f"{subject}? {ask}")
    return questions


def _metric_questions(metric: Metric) -> list[str]:
    ask = "defined in our metric catalog? Give its formula with every constant in it."
    questions = [f"How is {metric.label} {ask}"]
    if metric.unit:
        questions.append(f"How is {metric.label} (in {metric.unit}) {ask}")
    return questions


def _spoken_date(iso: str) -> str:
    """"2018-01-01" as "1 January 2018" (as written when it is no ISO date)."""
    try:
        day = datetime.strptime(iso, "%Y-%m-%d").date()
    except ValueError:
        return iso
    return f"{day.day} {_MONTHS[day.month - 1].title()} {day.year}"


def normalized(question: str) -> str:
    """A question as an agent would read it: case, accents, punctuation and spacing do not tell two apart."""
    text = unicodedata.normalize("NFKD", question.casefold())
    text = "".join(c for c in text if not unicodedata.combining(c))
    return " ".join(re.findall(r"[a-z0-9]+", text))


def _distinct(candidates: list[tuple[dict, list[str]]]) -> list[dict]:
    """Tasks whose questions all read differently: where two would read the same, each takes its next, more
    specific wording; tasks that still read the same are dropped, but for one when their gold is the same."""
    level = [0] * len(candidates)

    def groups() -> list[list[int]]:
        by_question: dict[str, list[int]] = {}
        for i, (_, questions) in enumerate(candidates):
            by_question.setdefault(normalized(questions[level[i]]), []).append(i)
        return [g for g in by_question.values() if len(g) > 1]

    while True:
        raised = False
        for i in sorted({i for g in groups() for i in g}):
            if level[i] + 1 < len(candidates[i][1]):
                level[i] += 1
                raised = True
        if not raised:
            break
    dropped = set()
    for group in groups():
        golds = {json.dumps(candidates[i][0]["gold"], sort_keys=True) for i in group}
        dropped |= set(group[1:] if len(golds) == 1 else group)
    tasks = []
    for i, (task, questions) in enumerate(candidates):
        if i not in dropped:
            task["question"] = questions[level[i]]
            tasks.append(task)
    return tasks


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


def knowledge_gaps(catalog: Catalog) -> list[str]:
    """Why a rule document gives no knowledge task, one line per rule that gets none (none said silently)."""
    lines = []
    for rule in sorted(catalog.rules.values(), key=lambda r: r.id):
        if rule_task(rule, catalog) or effective_date_task(rule, catalog):
            continue
        passage = governing_passage(rule.document)
        why = ("it has no `## Rule` section (the passage a knowledge task asks about)" if not passage else
               "its `## Rule` section states no number, date or **bold** term to check")
        when = (f", and no line saying 'effective' names its effective_from {rule.effective_from}"
                if rule.effective_from else ", and it has no effective_from")
        lines.append(f"note: rule {rule.id}'s document gives no knowledge task: {why}{when}")
    return lines


def knowledge_tasks(catalog: Catalog) -> list[dict]:
    """Every checkable knowledge task of the rule documents (what each changes, then when it takes effect) and of
    the metric catalog, in id order; no two questions read the same (see `_distinct`)."""
    candidates: list[tuple[dict, list[str]]] = []
    for rule in sorted(catalog.rules.values(), key=lambda r: r.id):
        if task := rule_task(rule, catalog):
            candidates.append((task, _rule_questions(rule, catalog)))
        if task := effective_date_task(rule, catalog):
            candidates.append((task, _effective_questions(rule, catalog)))
    for metric in sorted(catalog.metrics.values(), key=lambda m: m.id):
        if task := metric_task(metric):
            candidates.append((task, _metric_questions(metric)))
    return _distinct(candidates)
