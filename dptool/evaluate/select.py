"""Which tasks of a bundle a command works on: ids, analysis types, domains, tiers, metrics, rules and a stratified
sample.

The same selection means the same tasks in `answer`, `eval`, `score` and `serve`. A sample is stratified by
domain × analysis type and seeded; within a stratum tasks are taken in the order of a hash of the seed and their
id, so a task's place does not depend on the other tasks: two bundles that share tasks share their sample.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from dptool.errors import DptoolError

TIERS = ("knowledge", "knowledge+analytics", "knowledge+analytics+rule")


@dataclass(frozen=True)
class Selection:
    """Tasks by id, analysis type, domain, tier, metric (the one the task asks for: its first metric id) and rule
    (one of its rule ids; a counterfactual's withdrawn rule is one), each empty: any; then `sample` of them (None:
    all)."""

    tasks: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()
    sample: int | None = None
    seed: int = 42
    metrics: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()

    @property
    def everything(self) -> bool:
        return not (self.tasks or self.types or self.domains or self.tiers or self.metrics or self.rules
                    or self.sample)

    def as_dict(self) -> dict:
        """As run.json records it (lists, so that JSON reads it back equal). Metrics and rules are recorded only
        when given: a run folder written before they existed resumes with the same settings."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()
                if v or k not in ("metrics", "rules")}

    @classmethod
    def from_dict(cls, recorded: dict) -> Selection:
        """The selection run.json records (keys it does not know are ignored)."""
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in recorded.items()
                      if k in cls.__dataclass_fields__})

    def describe(self) -> str:
        """One line for people: "type ranking, domain banking; a sample of 20 (seed 42)", or "every task"."""
        parts = [f"{label} {', '.join(values)}" for label, values in (
            ("task", self.tasks[:5] + (("…",) if len(self.tasks) > 5 else ())), ("type", self.types),
            ("domain", self.domains), ("tier", self.tiers), ("metric", self.metrics), ("rule", self.rules)) if values]
        text = ", ".join(parts)
        if self.sample:
            text += f"{'; ' if text else ''}a sample of {self.sample} (stratified by domain and type, seed {self.seed})"
        return text or "every task"

    def apply(self, tasks: list[dict]) -> list[dict]:
        """The tasks selected, in bundle order. A name no task has is an error naming the ones there are."""
        _known(self.types, {t["analysis_type"] for t in tasks}, "--type", "analysis type")
        _known(self.domains, {t["domain"] for t in tasks}, "--domain", "domain")
        _known(self.tiers, {t["tier"] for t in tasks} | set(TIERS), "--tier", "tier")
        _known(self.metrics, {metric_of(t) for t in tasks} - {""}, "--metric", "metric")
        _known(self.rules, {r for t in tasks for r in rules_of(t)}, "--rule", "rule")
        _known(self.tasks, {t["task_id"] for t in tasks}, "--tasks", "task id")
        chosen = [t for t in tasks
                  if (not self.tasks or t["task_id"] in self.tasks)
                  and (not self.types or t["analysis_type"] in self.types)
                  and (not self.domains or t["domain"] in self.domains)
                  and (not self.tiers or t["tier"] in self.tiers)
                  and (not self.metrics or metric_of(t) in self.metrics)
                  and (not self.rules or not set(rules_of(t)).isdisjoint(self.rules))]
        if self.sample:
            chosen = stratified(chosen, self.sample, self.seed)
        if not chosen:
            raise DptoolError(f"the selection ({self.describe()}) holds no task of the bundle")
        return chosen


def metric_of(task: dict) -> str:
    """The metric a task asks for: the first of its metric ids (the others are those a composite is made of)."""
    ids = task.get("metric_ids")
    return ids[0] if isinstance(ids, list) and ids and isinstance(ids[0], str) else ""


def rules_of(task: dict) -> list[str]:
    """A task's rules: those that govern its answer, a counterfactual's withdrawn rule included; sorted."""
    ids = task.get("rule_ids")
    return sorted({r for r in ids if isinstance(r, str)}) if isinstance(ids, list) else []


def _known(asked: tuple[str, ...], there: set[str], option: str, what: str) -> None:
    unknown = [a for a in asked if a not in there]
    if unknown:
        shown = ", ".join(sorted(there)[:12]) + (" …" if len(there) > 12 else "")
        raise DptoolError(f"{option} {unknown[0]}: no {what} of the bundle is called that"
                          + (f" ({len(unknown)} such)" if len(unknown) > 1 else "") + f"; the bundle has: {shown}")


def _order(seed: int, task_id: str) -> str:
    return hashlib.sha256(f"{seed}:{task_id}".encode()).hexdigest()


def stratified(tasks: list[dict], n: int, seed: int) -> list[dict]:
    """`n` tasks (all when there are fewer), shared by the strata domain × analysis type in proportion to their
    size (largest remainder), every stratum at least one when `n` allows it; in bundle order."""
    if n >= len(tasks):
        return list(tasks)
    strata: dict[tuple[str, str], list[dict]] = {}
    for t in tasks:
        strata.setdefault((t["domain"], t["analysis_type"]), []).append(t)
    keys = sorted(strata)
    share = {k: 0 for k in keys}
    if n >= len(keys):
        share = {k: 1 for k in keys}
    left = n - sum(share.values())
    room = {k: len(strata[k]) - share[k] for k in keys}
    total = sum(room.values())
    exact = {k: left * room[k] / total for k in keys} if total else {k: 0 for k in keys}
    for k in keys:
        share[k] += int(exact[k])
    rest = n - sum(share.values())
    # the largest remainders, ties by stratum name: the same tasks always get the same sample
    for k in sorted(keys, key=lambda k: (-(exact[k] - int(exact[k])), k)):
        if rest <= 0:
            break
        if share[k] < len(strata[k]):
            share[k] += 1
            rest -= 1
    picked = set()
    for k in keys:
        ordered = sorted(strata[k], key=lambda t: _order(seed, t["task_id"]))
        picked |= {t["task_id"] for t in ordered[:share[k]]}
    return [t for t in tasks if t["task_id"] in picked]


def read_ids(text: str) -> tuple[str, ...]:
    """Task ids from `--tasks`: "ID,ID,…", or "@FILE" (ids separated by commas, spaces or lines; # comments)."""
    if text.startswith("@"):
        path = Path(text[1:])
        try:
            text = path.read_text(encoding="utf-8-sig")
        except OSError as exc:
            raise DptoolError(f"--tasks {path}: cannot read ({exc.strerror or exc})") from None
        text = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    ids = tuple(dict.fromkeys(i for i in re.split(r"[\s,]+", text) if i))
    if not ids:
        raise DptoolError(f"--tasks {text!r}: no task id in it")
    return ids
