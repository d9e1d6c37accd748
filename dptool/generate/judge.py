"""Stage 8 with an LLM: the eight-dimension judge, the one rewrite, and the judge's agreement with people.

DI-Bench §3.5 and Appendix E. Stage 1 (`dptool.generate.validate`) runs on every question first, the LLM's too.
The judge scores eight binary dimensions with a one-sentence justification each; a task is admitted
only if all eight pass. A task that fails only on phrasing is rewritten once and checked again, stage 1
and judge both. Phrasing means three dimensions — naturalness, leakage and format alignment — and the
two stage-1 checks about wording (identifier leakage, too short): the words can be fixed without
touching the answer. Objectivity, relevance, correctness, reasoning and scope are about whether the
question and its computed answer belong together; rewording cannot be trusted to fix those.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from dptool.errors import DptoolError
from dptool.generate.enrich import TREND_RULE
from dptool.generate.llm_phrase import (
    ANALYSIS_TYPES,
    NO_SCOPE_SENTENCE,
    generate_question,
    gold_json,
    rewrite_question,
    rules_block,
    scope_sentence,
    task_context,
)
from dptool.generate.phrase import selection_clause
from dptool.generate.validate import CHECKS, identifiers, issues
from dptool.llm.client import LLM, Prompt, load_prompt
from dptool.project.catalog import Catalog

STAGE_JUDGE = "judge"
DIMENSIONS = ("objectivity", "leakage", "naturalness", "relevance", "format_alignment", "correctness", "reasoning",
              "scope")
PHRASING = ("naturalness", "leakage", "format_alignment")
PHRASING_CHECKS = ("identifier_leakage", "too_short", "trend_rule_unstated", "selection_unstated")
PROMPT_VERSIONS = {"phrase": "2", "judge": "2", "rewrite": "2"}
MAX_SQL_CHARS = 8000
_TRUE = {"1", "pass", "passed", "true", "yes"}
_FALSE = {"0", "fail", "failed", "false", "no"}


@dataclass(frozen=True)
class Verdict:
    scores: dict[str, int]
    justifications: dict[str, str]

    @property
    def passed(self) -> bool:
        return all(self.scores[d] == 1 for d in DIMENSIONS)

    @property
    def failed(self) -> list[str]:
        return [d for d in DIMENSIONS if self.scores[d] != 1]

    def to_json(self) -> dict:
        return {d: {"score": self.scores[d], "justification": self.justifications[d]} for d in DIMENSIONS}


def _score(value) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float) and value in (0, 1):
        return int(value)
    if isinstance(value, str):
        text = value.strip().lower()
        return 1 if text in _TRUE else 0 if text in _FALSE else None
    return None


def verdict_problem(value: dict) -> str | None:
    """What keeps a judge reply from being a verdict (None when it is one)."""
    missing = [d for d in DIMENSIONS if d not in value]
    if missing:
        return "missing dimensions " + ", ".join(missing)
    for d in DIMENSIONS:
        entry = value[d]
        score = _score(entry.get("score", entry.get("pass")) if isinstance(entry, dict) else entry)
        if score is None:
            return f'{d} needs "score": 0 or 1'
    return None


def parse_verdict(value: dict) -> Verdict:
    problem = verdict_problem(value)
    if problem:
        raise DptoolError(f"not a judge verdict: {problem}")
    scores, reasons = {}, {}
    for d in DIMENSIONS:
        entry = value[d]
        if isinstance(entry, dict):
            scores[d] = _score(entry.get("score", entry.get("pass")))
            reasons[d] = " ".join(str(entry.get("justification") or "").split())[:400]
        else:
            scores[d], reasons[d] = _score(entry), ""
    return Verdict(scores, reasons)


def judge_messages(prompt: Prompt, task: dict, context: dict) -> list[dict]:
    sql = task.get("gold_sql") or "(none: a knowledge task; the gold answer is the passage of the rule or definition)"
    if len(sql) > MAX_SQL_CHARS:
        sql = sql[:MAX_SQL_CHARS] + "\n-- … (truncated)"
    metric = context["metric"] + (f" — {context['metric_definition']}" if context.get("metric_definition") else "")
    values = {"question": task["question"], "analysis_type": task["analysis_type"],
              "analysis_definition": ANALYSIS_TYPES.get(task["analysis_type"], ""), "metric": metric,
              "scope": context["scope"], "scope_sentence": context.get("scope_sentence") or NO_SCOPE_SENTENCE,
              "answer_shape": context["answer_shape"], "gold": gold_json(task),
              "sql": sql, "rules": rules_block(context)}
    return [{"role": "system", "content": prompt.render("system")},
            {"role": "user", "content": prompt.render("user", **values)}]


def judge(llm: LLM, prompt: Prompt, task: dict, context: dict) -> Verdict:
    """The judge's eight scores for a task (malformed replies are asked for again, boundedly)."""
    return parse_verdict(llm.chat_json(judge_messages(prompt, task, context), stage=STAGE_JUDGE,
                                       check=verdict_problem))


@dataclass
class Review:
    """What stage 2 did over a whole run: for the card and the bundle's judge.jsonl."""

    records: list[dict] = field(default_factory=list)
    failed_first: Counter = field(default_factory=Counter)  # dimension -> tasks failing it on the first verdict
    failed_final: Counter = field(default_factory=Counter)  # dimension -> rejected tasks failing it at the end
    counts: Counter = field(default_factory=Counter)  # judged, rewritten, admitted, admitted_after_rewrite, ...


class Reviewer:
    """Phrase (LLM), stage 1, judge and one rewrite, task by task, in task order."""

    def __init__(self, llm: LLM, catalog: Catalog):
        self.llm = llm
        self.catalog = catalog
        self.prompts = {name: load_prompt(name, version) for name, version in PROMPT_VERSIONS.items()}
        self.banned = identifiers(catalog)
        self.review = Review()
        self.reasons: dict[str, str] = {}  # task_id -> why it was rejected

    def __call__(self, tasks: list[dict]) -> tuple[list[dict], Counter]:
        """Tasks that pass stage 1 and the judge (with LLM questions), and stage-1 rejections per check."""
        kept, rejected = [], Counter({c: 0 for c in CHECKS})
        for task in tasks:
            record = self._one(task)
            self.review.records.append(record)
            if record["admitted"]:
                kept.append(task)
            else:
                self.reasons[task["task_id"]] = record["reason"]
                rejected.update(record.get("stage1", []))
        return kept, rejected

    def _stage1(self, task: dict) -> list[str]:
        return issues(task, self.catalog, self.banned)

    def _one(self, task: dict) -> dict:
        record = {"task_id": task["task_id"], "template_question": task["question"], "questions": [],
                  "verdicts": [], "rewritten": False, "admitted": False, "reason": ""}
        failed = self._stage1(task)
        if any(f not in PHRASING_CHECKS for f in failed):  # about the task, not its words: no LLM call
            return {**record, "stage1": failed, "reason": "stage 1: " + ", ".join(failed)}
        context = task_context(task, self.catalog)
        task["question"] = generate_question(self.llm, self.prompts["phrase"], task, context)
        record["questions"].append(task["question"])
        failed = self._stage1(task)
        if failed:
            self._rewrite(task, context, record, [self._describe(f, task) for f in failed])
            failed = self._stage1(task)
            if failed:
                return {**record, "stage1": failed, "reason": "stage 1: " + ", ".join(failed)}
        self.review.counts["judged"] += 1
        verdict = judge(self.llm, self.prompts["judge"], task, context)
        record["verdicts"].append(verdict.to_json())
        self.review.failed_first.update(verdict.failed)
        if not verdict.passed and set(verdict.failed) <= set(PHRASING) and not record["rewritten"]:
            self._rewrite(task, context, record,
                          [f"{d.replace('_', ' ')}: {verdict.justifications[d] or 'failed'}" for d in verdict.failed])
            failed = self._stage1(task)
            if failed:
                return {**record, "stage1": failed, "reason": "stage 1 after rewrite: " + ", ".join(failed)}
            verdict = judge(self.llm, self.prompts["judge"], task, context)
            record["verdicts"].append(verdict.to_json())
        if verdict.passed:
            self.review.counts["admitted"] += 1
            self.review.counts["admitted_after_rewrite"] += int(record["rewritten"])
            return {**record, "admitted": True}
        self.review.failed_final.update(verdict.failed)
        self.review.counts["rejected_by_judge"] += 1
        return {**record, "reason": "judge: " + ", ".join(verdict.failed)}

    def _rewrite(self, task: dict, context: dict, record: dict, problems: list[str]) -> None:
        self.review.counts["rewritten"] += 1
        task["question"] = rewrite_question(self.llm, self.prompts["rewrite"], task, context, problems)
        record["questions"].append(task["question"])
        record["rewritten"] = True

    def _describe(self, check: str, task: dict) -> str:
        if check == "identifier_leakage":
            words = set(re.findall(r"[a-z0-9_]+", task["question"].lower()))
            named = sorted(words & self.banned) or ["a table or column name"]
            return f"leakage: the question names database identifiers ({', '.join(named)})"
        if check == "too_short":
            return "the question is too short to state the metric, the scope and the answer wanted"
        if check == "scope_mismatch":
            sentence = scope_sentence(task, self.catalog)
            return (f"the question must contain, word for word, the sentence: {sentence}" if sentence else
                    "the question must not say which policies apply (it applies all of them)")
        if check == "trend_rule_unstated":
            return f"the question must state how the direction is decided: {TREND_RULE}"
        if check == "selection_unstated":
            ids = task.get("metric_ids") or [""]
            return ("the question must contain, word for word, the sentence: "
                    f"{selection_clause(ids[0], self.catalog).strip()}")
        return check


def review_jsonl(review: Review) -> str:
    """judge.jsonl of a bundle: per reviewed task, its questions, verdicts and outcome."""
    lines = [json.dumps(r, ensure_ascii=False, sort_keys=True)
             for r in sorted(review.records, key=lambda r: r["task_id"])]
    return "\n".join(lines) + ("\n" if lines else "")


# --- agreement with people (Appendix E.3) --------------------------------------------------------------------------


def load_sample(path: str | Path) -> list[dict]:
    """A labeled sample: JSONL of {id, task, context, labels: {dimension: 0|1}, notes}; a folder holds sample.jsonl."""
    path = Path(path)
    if path.is_dir():
        path = path / "sample.jsonl"
    if not path.is_file():
        raise DptoolError(f"{path}: no labeled sample here (JSONL with task, context and labels per line)")
    items = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DptoolError(f"{path}:{n}: not JSON ({exc.msg})") from None
        for key in ("id", "task", "context", "labels"):
            if key not in item:
                raise DptoolError(f"{path}:{n}: missing {key!r}")
        bad = [d for d in DIMENSIONS if item["labels"].get(d) not in (0, 1)]
        if bad:
            raise DptoolError(f"{path}:{n}: labels.{bad[0]} must be 0 or 1")
        items.append(item)
    if not items:
        raise DptoolError(f"{path}: the sample is empty")
    return items


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def agreement(items: list[dict], verdicts: list[Verdict]) -> dict:
    """Per dimension: pass rates and the judge's precision and recall against the labels.

    "pass" is the positive class, as for an admission filter: precision is the share of the judge's
    passes that people pass too; recall the share of people's passes the judge passes. The same for
    "fail" (does the judge catch bad tasks?), and for admission (all eight pass).
    """
    def stats(human: list[int], machine: list[int]) -> dict:
        tp = sum(h == 1 and m == 1 for h, m in zip(human, machine, strict=True))
        fp = sum(h == 0 and m == 1 for h, m in zip(human, machine, strict=True))
        fn = sum(h == 1 and m == 0 for h, m in zip(human, machine, strict=True))
        tn = sum(h == 0 and m == 0 for h, m in zip(human, machine, strict=True))
        return {"n": len(human), "human_pass_rate": _ratio(sum(human), len(human)),
                "judge_pass_rate": _ratio(sum(machine), len(machine)),
                "precision": _ratio(tp, tp + fp), "recall": _ratio(tp, tp + fn),
                "fail_precision": _ratio(tn, tn + fn), "fail_recall": _ratio(tn, tn + fp),
                "agreement": _ratio(tp + tn, len(human))}

    table = {d: stats([i["labels"][d] for i in items], [v.scores[d] for v in verdicts]) for d in DIMENSIONS}
    human_admit = [int(all(i["labels"][d] == 1 for d in DIMENSIONS)) for i in items]
    judge_admit = [int(v.passed) for v in verdicts]
    admitted = [i for i, v in zip(items, verdicts, strict=True) if v.passed]
    return {
        "dimensions": table,
        "admission": stats(human_admit, judge_admit),
        # Table 11's third column: how people rate what the judge admits, per dimension
        "admitted_human_pass_rate": {d: _ratio(sum(i["labels"][d] for i in admitted), len(admitted))
                                     for d in DIMENSIONS},
        "tasks": [{"id": i["id"], "labels": i["labels"], "judge": v.to_json()}
                  for i, v in zip(items, verdicts, strict=True)],
    }


def agreement_markdown(result: dict, model: str, prompt: str, sample: str) -> str:
    def pct(x: float | None) -> str:
        return "—" if x is None else f"{x * 100:.0f}%"

    rows = [f"## Judge agreement: {model} ({prompt}) vs the labels of {sample}", "",
            "| dimension | n | human pass | judge pass | precision | recall | fail precision | fail recall | "
            "admitted, human pass |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for d in DIMENSIONS:
        s = result["dimensions"][d]
        rows.append(f"| {d} | {s['n']} | {pct(s['human_pass_rate'])} | {pct(s['judge_pass_rate'])} | "
                    f"{pct(s['precision'])} | {pct(s['recall'])} | {pct(s['fail_precision'])} | "
                    f"{pct(s['fail_recall'])} | {pct(result['admitted_human_pass_rate'][d])} |")
    s = result["admission"]
    rows.append(f"| all eight (admission) | {s['n']} | {pct(s['human_pass_rate'])} | {pct(s['judge_pass_rate'])} | "
                f"{pct(s['precision'])} | {pct(s['recall'])} | {pct(s['fail_precision'])} | "
                f"{pct(s['fail_recall'])} | |")
    return "\n".join(rows) + "\n"
