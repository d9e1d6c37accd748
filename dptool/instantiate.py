"""Stage 4: concrete candidates from skeletons — analysis type, time window, slice values, k."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date

from dptool.catalog import Catalog
from dptool.profile import DimensionProfile
from dptool.sample import Skeleton
from dptool.sql import equals, in_window

MIN_WINDOW_SHARE = 0.03  # a window must hold this share of the dimension's rows
MIN_SLICE_ROWS = 40  # a slice value must have at least this many rows overall
MIN_GROUP_ROWS = 30  # a ranked group must hold this many rows: a ranking of tiny groups is noise


@dataclass(frozen=True)
class Window:
    start: date
    end: date  # exclusive
    label: str


@dataclass
class Candidate:
    """One task before dbt has computed it."""

    skeleton: Skeleton
    analysis_type: str
    where: list[str]
    group_by: list[str]
    shape: str
    k: int | None
    min_rows: int | None = None
    slice: dict = field(default_factory=dict)
    window: Window | None = None
    task_id: str = ""

    @property
    def metric(self) -> str:
        return self.skeleton.metric

    @property
    def rules(self) -> tuple[str, ...]:
        return self.skeleton.rules

    @property
    def dimension_column(self) -> str:
        return self.skeleton.dimension.rsplit(".", 1)[-1]


def windows(profile: DimensionProfile) -> list[Window]:
    """Calendar quarters, halves and years whose months all hold data and that hold enough rows."""
    counts = {(y, m): n for y, m, n in profile.months}
    total = sum(counts.values()) or 1
    years = sorted({y for y, _ in counts})
    spans = []
    for y in years:
        for q in range(4):
            spans.append((y, 3 * q + 1, 3, f"Q{q + 1} {y}"))
        spans.append((y, 1, 6, f"the first half of {y}"))
        spans.append((y, 7, 6, f"the second half of {y}"))
        spans.append((y, 1, 12, f"{y}"))
    out = []
    for y, m, length, label in spans:
        months = [(y + (m - 1 + i) // 12, (m - 1 + i) % 12 + 1) for i in range(length)]
        if all(counts.get(ym, 0) > 0 for ym in months) and sum(counts[ym] for ym in months) >= MIN_WINDOW_SHARE * total:
            end_y, end_m = y + (m - 1 + length) // 12, (m - 1 + length) % 12 + 1
            out.append(Window(date(y, m, 1), date(end_y, end_m, 1), label))
    return out


def instantiate(
    skeletons: list[Skeleton], catalog: Catalog, profiles: dict[str, DimensionProfile], seed: int, dialect: str
) -> list[Candidate]:
    """Every compatible analysis type of every skeleton, made concrete; ids t_0001... in order."""
    out = []
    for skeleton in skeletons:
        metric = catalog.metrics[skeleton.metric]
        temporal = next((d for d in catalog.dimensions_of(metric) if d.kind == "temporal"), None)
        spans = windows(profiles[temporal.id]) if temporal else []
        for analysis_type in skeleton.analysis_types:
            rng = random.Random(f"{seed}:{skeleton.id}:{analysis_type}")
            candidate = _make(skeleton, analysis_type, catalog, profiles, spans, temporal, rng, dialect)
            if candidate is not None:
                out.append(candidate)
    for i, c in enumerate(out, start=1):
        c.task_id = f"t_{i:04d}"
    return out


def _make(skeleton, analysis_type, catalog, profiles, spans, temporal, rng, dialect) -> Candidate | None:
    dim = catalog.dimensions[skeleton.dimension]
    profile = profiles[dim.id]
    where: list[str] = []
    slice_: dict = {}
    window = None
    if spans:
        # rankings read a longer span so that every group holds enough rows
        pool = [w for w in spans if (w.end - w.start).days > 100] if analysis_type == "ranking" else spans
        window = rng.choice(pool or spans)
        where += in_window(temporal.column, window.start, window.end, dialect)
        slice_["window"] = {"start": window.start.isoformat(), "end": window.end.isoformat(), "label": window.label}
    if analysis_type == "ranking":
        if dim.kind == "temporal" or profile.distinct < 3:
            return None
        k = 5 if profile.distinct > 6 else 3
        slice_["min_group_rows"] = MIN_GROUP_ROWS
        return Candidate(skeleton, analysis_type, where, [dim.column], "ranking", k, MIN_GROUP_ROWS, slice_, window)
    if dim.kind != "temporal":
        value = _slice_value(skeleton, dim, profile, catalog, rng)
        if value is None:
            return None
        where.append(equals(dim.column, value, dialect))
        slice_[dim.column] = value
    return Candidate(skeleton, analysis_type, where, [], "value", None, None, slice_, window)


def _slice_value(skeleton, dim, profile, catalog, rng):
    # a rule conditional on this dimension is tested on the value it names
    for rule_id in skeleton.rules:
        wanted = catalog.rules[rule_id].applies_when.get(dim.column)
        if wanted is not None:
            return wanted
    frequent = [v for v, n in profile.top_values if n >= MIN_SLICE_ROWS][:8]
    return rng.choice(frequent) if frequent else None
