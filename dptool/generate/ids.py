"""Task ids that name what a task asks, not where it fell in a run.

A task's id is a short hash of its question's content — domain, analysis type, metric, the rule scope its
question states (every governing rule, the rules it names, none, or all but a withdrawn one), dimension and
slice (window, segment, groups), k, the ranking's minimum rows and the threshold's direction — behind a prefix
naming its type (`thr_3f9a1c2b`). The same question gets the same id in every regeneration, whatever the target,
the order the skeletons were sampled in or the other tasks; a refresh can then say "same question, new gold".

What the question does not state is not in the id: a question that applies every governing rule says nothing of
which rules those are, so adding a rule to its metric keeps its id and changes its gold.

Two different questions never share an id: `Ids` keeps every key it gave an id, and a key whose hash prefix
another key already holds gets a longer one (collisions are counted, not assumed away).
"""

from __future__ import annotations

import hashlib
import json

PREFIX = {
    "point_query": "pq", "trend_analysis": "tr", "comparison": "cmp", "ranking": "rk",
    "significance_testing": "sig", "threshold_crossing": "thr", "counterfactual": "cf", "decomposition": "dec",
    "knowledge_retrieval": "kn",
}
WIDTH = 8  # hex digits: 32 bits, about one collision in 10,000 bundles of 1,000 tasks (then one id is longer)


def question_key(domain: str, analysis_type: str, metric: str, scope: str | None, dimension: str | None,
                 slice_: dict, rules=(), withdrawn: str | None = None, k: int | None = None,
                 min_rows: int | None = None) -> dict:
    """What a SQL task's question asks, as plain data: the text its id is a hash of."""
    key = {"domain": domain, "type": analysis_type, "metric": metric, "scope": scope, "dimension": dimension,
           "slice": slice_}
    if scope == "subset":  # the question names them; "all" and "none" name none
        key["rules"] = sorted(rules)
    if withdrawn:
        key["withdrawn"] = withdrawn
    if k is not None:
        key["k"] = k
    if min_rows is not None:
        key["min_rows"] = min_rows
    if analysis_type == "threshold_crossing":
        key["comparison"] = "exceeds"
    return key


def candidate_key(c, domain: str) -> dict:
    """The key of a `dptool.generate.instantiate.Candidate`."""
    return question_key(domain, c.analysis_type, c.metric, c.rule_scope, c.dimension_column, c.slice, c.rules,
                        c.withdrawn_rule, c.k, c.min_rows)


def task_key(task: dict) -> dict:
    """The key of a task of a bundle (one written before ids named content too)."""
    if task["analysis_type"] == "knowledge_retrieval":
        return knowledge_key(task)
    spec = task.get("spec") or {}
    return question_key(task["domain"], task["analysis_type"], task["metric_ids"][0], task.get("rule_scope"),
                        task["dimension"], task["slice"], task.get("rules_in_force") or task["rule_ids"],
                        task.get("withdrawn_rule"), spec.get("k"), spec.get("min_rows"))


def knowledge_key(task: dict) -> dict:
    """What a knowledge task asks: which document or catalog entry, and which of its facts."""
    return {"domain": task["domain"], "type": task["analysis_type"], "subgraph": task["subgraph_id"],
            "asks": (task.get("answer_format") or {}).get("asks", "content")}


def canonical(key: dict) -> str:
    """The key as the text its hash is taken of: sorted keys, no whitespace, non-ASCII kept."""
    return json.dumps(key, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


class Ids:
    """Hands out content ids for one run: the same key always gets the same id, two keys never share one."""

    def __init__(self, width: int = WIDTH):
        self.width = width
        self.by_key: dict[str, str] = {}
        self.keys: dict[str, str] = {}  # id -> canonical key
        self.collisions = 0

    def __call__(self, key: dict) -> str:
        text = canonical(key)
        if text in self.by_key:
            return self.by_key[text]
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        prefix = PREFIX.get(key.get("type"), "t")
        width = self.width
        while (task_id := f"{prefix}_{digest[:width]}") in self.keys:
            width += 1
            self.collisions += width == self.width + 1
        self.by_key[text] = task_id
        self.keys[task_id] = text
        return task_id

    def forget(self, task_id: str) -> None:
        """Give an id back: its candidate was made but not asked."""
        text = self.keys.pop(task_id, None)
        if text is not None:
            del self.by_key[text]

    def taken(self, key: dict) -> bool:
        """Has this very question been given an id already (a second candidate asking it)?"""
        return canonical(key) in self.by_key
