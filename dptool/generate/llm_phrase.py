"""Stage 7 with an LLM: questions generated backward from the computed answers (DI-Bench §3.4).

The prompt (dptool/llm/prompts/phrase_v2.toml) gets what DI-Bench names — the metric name, the gold answer,
the analysis type and the rule documents that change the answer — plus the answer's scope (window,
segment, groups, k, threshold), without which no question could fix the answer, and its policy scope
sentence (which of the governing policies the answer applies; the template phraser's sentence, word for
word). The model is told not to expose database internals nor to hint at which document to consult; stage 1
(including its scope_mismatch check) and the judge check it.
The template phraser (`dptool.generate.phrase`) stays the default.
"""

from __future__ import annotations

import json

from dptool.generate.enrich import TREND_RULE
from dptool.generate.knowledge import EFFECTIVE_DATE, governing_passage
from dptool.generate.phrase import (
    REPORTABLE,
    at_least,
    counted,
    format_number,
    own_rows_sentence,
    plural,
    selection_clause,
    spoken,
)
from dptool.generate.phrase import scope_sentence as template_scope_sentence
from dptool.generate.values import said
from dptool.llm.client import LLM, Prompt
from dptool.project.catalog import Catalog, Metric

STAGE_PHRASE = "phrase"
STAGE_REWRITE = "rewrite"
MAX_RULE_CHARS = 2500

# DI-Bench Appendix A, one line each: what an answer of each analysis type is
ANALYSIS_TYPES = {
    "knowledge_retrieval": "what a company rule or a metric definition states: its exact thresholds, dates and "
                           "conditions",
    "point_query": "one value of the metric for a segment and a time window",
    "trend_analysis": "how the metric developed month by month over a window: direction, total change and peak",
    "comparison": "which of two groups has the higher value of the metric, with both values",
    "ranking": "the groups with the highest values of the metric, in order, with their values",
    "significance_testing": "whether the difference of the metric between two groups is statistically "
                            "significant",
    "threshold_crossing": "whether the metric exceeded a threshold: PASS or FAIL, with the value",
    "counterfactual": "the value the metric would have had if one policy had never been adopted, every other "
                      "policy still in force",
    "decomposition": "the metric broken down by every group of a dimension",
}


def _metric(task: dict, catalog: Catalog) -> Metric | None:
    ids = task.get("metric_ids") or []
    return catalog.metrics.get(ids[0]) if ids else None


def _dimension(task: dict, catalog: Catalog, metric: Metric | None):
    column = task.get("dimension") or ""
    return next((dim for dim in sorted(catalog.dimensions.values(), key=lambda d: d.id)
                 if dim.column == column and (metric is None or dim.table in metric.tables)), None)


def _dimension_label(task: dict, catalog: Catalog, metric: Metric | None) -> str:
    dim = _dimension(task, catalog, metric)
    return dim.label if dim is not None else spoken(task.get("dimension") or "")


def _unit(metric: Metric) -> str:
    if metric.format == "percent":
        return "a percentage"
    return metric.unit or "a number"


def scope(task: dict, catalog: Catalog) -> str:
    """The answer's scope in words: window, segment or groups, list length, threshold; and the template's sentences
    to be said: which rows a slice on another table's column keeps, where its readings differ, and the window a
    metric's selected members are picked over."""
    text = _scope(task, catalog)
    metric = _metric(task, catalog)
    if metric is None or task["analysis_type"] == "knowledge_retrieval":
        return text
    dim = _dimension(task, catalog, metric)
    rows = "" if dim is None or dim.kind == "temporal" else \
        own_rows_sentence(metric.id, dim, task.get("slice") or {}, catalog).strip()
    sentences = " ".join(x for x in (rows, selection_clause(metric.id, catalog).strip()) if x)
    return f"{text}; say: \"{sentences}\"" if sentences else text


def _scope(task: dict, catalog: Catalog) -> str:
    kind = task["analysis_type"]
    metric = _metric(task, catalog)
    if kind == "knowledge_retrieval":
        labels = [catalog.metrics[m].label for m in task.get("metric_ids") or [] if m in catalog.metrics]
        rules = [catalog.rules[r] for r in task.get("rule_ids") or [] if r in catalog.rules]
        # the topic is named: other policies change the same metrics, and every question must tell which is meant
        if rules and (task.get("answer_format") or {}).get("asks") == EFFECTIVE_DATE:
            return f"the date the company policy on {rules[0].title} takes effect, as its document states it " \
                   f"(name the topic \"{rules[0].title}\")"
        if rules:
            return f"what the company policy on {rules[0].title} changes in how " + _and(labels) + \
                f" is calculated (other policies may change it too: name the topic \"{rules[0].title}\")"
        return "how " + _and(labels) + " is defined in the company's metric catalog, with every constant"
    assert metric is not None
    window_data = (task.get("slice") or {}).get("window")
    window = f"in {window_data['label']}" if window_data else "over the whole history"
    dim = _dimension_label(task, catalog, metric)
    slice_ = task.get("slice") or {}
    column = task.get("dimension")
    segment = f"for {said(dim, slice_[column])} " if column in slice_ else ""
    fmt = task.get("answer_format") or {}
    if kind in ("point_query", "threshold_crossing", "counterfactual"):
        text = f"{metric.label} {segment}{window}"
        if kind == "threshold_crossing":
            threshold = format_number(task["gold"]["threshold"], metric.format, metric.unit)
            text += f"; threshold {threshold} (does the value exceed it?)"
        if kind == "counterfactual":
            withdrawn = catalog.rules.get(slice_.get("withdrawn_rule", ""))
            title = withdrawn.title if withdrawn else spoken(slice_.get("withdrawn_rule", ""))
            text += f", as if the policy \"{title}\" had never been adopted, every other policy still in force"
        return text
    if kind == "trend_analysis":
        return f"{metric.label} month by month {window}" + _reportable(task)
    if kind == "ranking":
        k = fmt.get("k") or len(task.get("gold") or [])
        rows = slice_.get("min_group_rows")
        rules = (task.get("spec") or {}).get("rules", task.get("rule_ids") or [])
        among = f" among {plural(dim)} with {at_least(rows, metric.id, catalog)}" \
            f"{counted(metric.id, rules, metric.grain, catalog)}" if rows else ""
        return f"the top {k} {plural(dim)} by {metric.label}{among}, {window}" + _reportable(task)
    if kind in ("comparison", "significance_testing"):
        a, b = (said(dim, g) for g in slice_.get("groups", ["?", "?"]))
        text = f"{metric.label} of {a} versus {b}, {window}"
        if kind == "significance_testing":
            text += f"; two-tailed Welch's t-test over the individual {metric.grain}, 5% level"
        return text
    if kind == "decomposition":
        return f"{metric.label} for every {dim}, {window}" + _reportable(task)
    return f"{metric.label} {window}"


def _reportable(task: dict) -> str:
    """What a listing question must say when its policies remove groups it would list (validate's
    removed_group_asked checks those words, as it checks a template's)."""
    if not (task.get("support") or {}).get("removed"):
        return ""
    return f"; only the ones {REPORTABLE} (say these words: \"{REPORTABLE}\")"


NO_SCOPE_SENTENCE = "(none: the question says nothing about which policies apply)"


def scope_sentence(task: dict, catalog: Catalog) -> str:
    """The sentence that states which of the governing policies a SQL task's answer applies ("" when it applies
    all of them, as a question that says nothing does): the template phraser's, so stage 1 checks both alike."""
    withdrawn = catalog.rules.get(task.get("withdrawn_rule") or "")
    if task["analysis_type"] == "counterfactual" and withdrawn is not None:
        return (f"Suppose the policy \"{withdrawn.title}\" had never been adopted, with every other policy still "
                "in force.")
    ids = task.get("metric_ids") or []
    if task.get("rule_scope") not in ("subset", "none") or not ids or ids[0] not in catalog.metrics:
        return ""
    return template_scope_sentence(task["rule_scope"], task.get("rules_in_force") or [], ids[0], catalog).strip()


def answer_shape(task: dict, catalog: Catalog) -> str:
    """What the question must ask for, from the answer format."""
    fmt = task.get("answer_format") or {}
    metric = _metric(task, catalog)
    unit = f", as {_unit(metric)}" if metric else ""
    dim = _dimension_label(task, catalog, metric)
    kind = fmt.get("type")
    if kind == "knowledge" and fmt.get("asks") == EFFECTIVE_DATE:
        return "the exact date the policy takes effect"
    if kind == "knowledge":
        return "the exact thresholds, dates and conditions the rule or definition states"
    if kind == "ranking":
        return f"the {fmt.get('k')} {plural(dim)} in order from highest to lowest, each with its value{unit}"
    if kind == "threshold":
        return f"PASS if the value exceeds the threshold, FAIL if not, and the value{unit}"
    if kind == "trend":
        return (f"the direction (increasing, decreasing or flat; the question must state how it is decided: "
                f"{TREND_RULE}), the total change from the first to the last month in percent, and the month of "
                "the peak")
    if kind == "comparison":
        return f"which of the two {plural(dim)} has the higher value, and the value of each{unit}"
    if kind == "significance":
        return "whether the difference is statistically significant at the 5% level, and the p-value"
    if kind == "breakdown":
        return f"the value for every {dim}{unit}"
    return f"the value{unit}"


def rule_texts(task: dict, catalog: Catalog) -> list[dict]:
    """Title and governing passage of every rule document that changes the answer."""
    out = []
    for rule_id in task.get("rule_ids") or []:
        rule = catalog.rules.get(rule_id)
        if rule is None:
            continue
        text = governing_passage(rule.document) or rule.document
        if len(text) > MAX_RULE_CHARS:
            text = text[:MAX_RULE_CHARS].rsplit(" ", 1)[0] + " …"
        out.append({"title": rule.title, "text": text})
    return out


def task_context(task: dict, catalog: Catalog) -> dict:
    """Everything the LLM stages see besides the task record itself (plain data: fixtures hold it too)."""
    metric = _metric(task, catalog)
    labels = [catalog.metrics[m].label for m in task.get("metric_ids") or [] if m in catalog.metrics]
    if task["analysis_type"] == "knowledge_retrieval" or metric is None:
        name, definition = _and(labels), ""
    else:
        name = metric.label
        definition = f"{metric.formula} (unit: {metric.unit or '—'}, format: {metric.format})"
    return {"metric": name, "metric_definition": definition, "scope": scope(task, catalog),
            "scope_sentence": scope_sentence(task, catalog), "answer_shape": answer_shape(task, catalog),
            "rules": rule_texts(task, catalog)}


def _and(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def rules_block(context: dict) -> str:
    if not context["rules"]:
        return "(none)"
    return "\n\n".join(f"### {r['title']}\n{r['text']}" for r in context["rules"])


def gold_json(task: dict) -> str:
    gold = task.get("gold")
    if task["analysis_type"] == "knowledge_retrieval" and isinstance(gold, dict):
        gold = {"passage": gold.get("passage"), "facts": gold.get("facts")}
    return json.dumps(gold, ensure_ascii=False, sort_keys=True)


def _question_problem(value: dict) -> str | None:
    question = value.get("question")
    if not isinstance(question, str) or not question.strip():
        return 'the object needs a non-empty string "question"'
    return None


def _clean(text: str) -> str:
    return " ".join(text.split())


def generate_question(llm: LLM, prompt: Prompt, task: dict, context: dict) -> str:
    """The question for a task's gold answer, from the model."""
    values = {"metric": context["metric"], "analysis_type": task["analysis_type"],
              "analysis_definition": ANALYSIS_TYPES.get(task["analysis_type"], ""), "scope": context["scope"],
              "scope_sentence": context.get("scope_sentence") or NO_SCOPE_SENTENCE,
              "answer_shape": context["answer_shape"], "gold": gold_json(task), "rules": rules_block(context)}
    messages = [{"role": "system", "content": prompt.render("system")},
                {"role": "user", "content": prompt.render("user", **values)}]
    return _clean(llm.chat_json(messages, stage=STAGE_PHRASE, check=_question_problem)["question"])


def rewrite_question(llm: LLM, prompt: Prompt, task: dict, context: dict, problems: list[str]) -> str:
    """The question reworded once so that its phrasing problems are gone, same answer."""
    values = {"question": task["question"], "problems": "\n".join(f"- {p}" for p in problems),
              "metric": context["metric"], "analysis_type": task["analysis_type"],
              "analysis_definition": ANALYSIS_TYPES.get(task["analysis_type"], ""), "scope": context["scope"],
              "scope_sentence": context.get("scope_sentence") or NO_SCOPE_SENTENCE,
              "answer_shape": context["answer_shape"], "gold": gold_json(task)}
    messages = [{"role": "system", "content": prompt.render("system")},
                {"role": "user", "content": prompt.render("user", **values)}]
    return _clean(llm.chat_json(messages, stage=STAGE_REWRITE, check=_question_problem)["question"])
