"""Stage 4: concrete candidates from skeletons — analysis type, time window, slice values, groups, k."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import date, timedelta

import sqlglot
from sqlglot import exp

from dptool.generate.ids import Ids, candidate_key
from dptool.generate.minimum import MIN_ROWS, SUPPORT_MARGIN
from dptool.generate.profile import DimensionProfile, data_span
from dptool.generate.sample import Skeleton
from dptool.generate.values import unsayable
from dptool.project.catalog import Catalog, Dimension
from dptool.sql import column as sql_column
from dptool.sql import in_window, literal

MIN_WINDOW_SHARE = 0.03  # a window must hold this share of the dimension's rows
# a ranked group must hold this many rows (a ranking of tiny groups is noise): the minimum support's rows, the dbt
# var dptool_min_support (dptool.generate.minimum), 30 by default
MIN_GROUP_ROWS = MIN_ROWS
MIN_SLICE_ROWS = 40  # a slice value must have at least this many rows overall (at the default minimum; it scales)
MAX_BREAKDOWN_GROUPS = 30  # a decomposition lists every group: a few dozen at most


@dataclass(frozen=True)
class Window:
    start: date
    end: date  # exclusive
    label: str

    @property
    def months(self) -> int:
        return (self.end.year - self.start.year) * 12 + self.end.month - self.start.month


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
    gold_rules: tuple[str, ...] | None = None  # None: the skeleton's rules
    base_rules: tuple[str, ...] = ()  # a counterfactual's base applies every rule
    period: str | None = None  # a Jinja expression for the series shape's period
    encoding: str = "timestamp"  # of the time column the window and period read
    # what the question states about the rules, and the gold applies (`rules`): every rule that governs the
    # metric ("all"; a counterfactual: all but `withdrawn_rule`), the rules it names ("subset"), none ("none")
    rule_scope: str | None = None  # set by `instantiate`
    withdrawn_rule: str | None = None

    @property
    def metric(self) -> str:
        return self.skeleton.metric

    @property
    def rules(self) -> tuple[str, ...]:
        """The rules the gold variant applies: the rules in force."""
        return self.skeleton.rules if self.gold_rules is None else self.gold_rules

    @property
    def dimension_column(self) -> str:
        return self.skeleton.dimension.rsplit(".", 1)[-1]


def windows(profile: DimensionProfile, span: tuple[tuple[int, int], tuple[int, int]] | None = None) -> list[Window]:
    """Calendar quarters, halves and years whose months all hold data and that hold enough rows; with `span`
    (first and last month, dptool.generate.profile.data_span), only those inside it."""
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
        if span is not None and not span[0] <= months[0] <= months[-1] <= span[1]:
            continue
        if all(counts.get(ym, 0) > 0 for ym in months) and sum(counts[ym] for ym in months) >= MIN_WINDOW_SHARE * total:
            end_y, end_m = y + (m - 1 + length) // 12, (m - 1 + length) % 12 + 1
            out.append(Window(date(y, m, 1), date(end_y, end_m, 1), label))
    return out


def window_predicates(column: str, window: Window, encoding: str, dialect: str, quote: bool = False) -> list[str]:
    """`start <= column < end` for a timestamp column or a YYMMDD integer column."""
    if encoding == "yymmdd":
        def code(d: date) -> int:
            return (d.year % 100) * 10000 + d.month * 100 + d.day

        # the last day, inclusive: the day after a window ending with 1999 would be coded 000101
        col = sql_column(column, quote)
        last = window.end - timedelta(days=1)
        return [exp.GTE(this=col.copy(), expression=literal(code(window.start))).sql(dialect),
                exp.LTE(this=col.copy(), expression=literal(code(last))).sql(dialect)]
    return in_window(column, window.start, window.end, dialect, quote)


def period_expression(column: str, encoding: str, dialect: str, quote: bool = False) -> str:
    """The month of a time column, as a Jinja expression for the gold model (cross-database)."""
    if encoding == "yymmdd":
        sql = exp.Floor(this=exp.Div(this=sql_column(column, quote), expression=exp.Literal.number(100))).sql(dialect)
        return _jinja_string(sql)
    return f"dbt.date_trunc('month', {_jinja_string(sql_column(column, quote).sql(dialect))})"


def one_of(column: str, values: list, dialect: str, quote: bool = False) -> str:
    """`column = v` or `column IN (a, b)`, each value a literal; a NULL value is `column IS NULL` (`= NULL` holds
    for no row), or'ed with the others."""
    col = sql_column(column, quote)
    known = [v for v in values if v is not None]
    parts: list[exp.Expression] = []
    if len(known) == 1:
        parts.append(exp.EQ(this=col.copy(), expression=literal(known[0])))
    elif known:
        parts.append(exp.In(this=col.copy(), expressions=[literal(v) for v in known]))
    if len(known) < len(values):
        parts.append(exp.Is(this=col.copy(), expression=exp.null()))
    return exp.or_(*parts).sql(dialect) if len(parts) > 1 else parts[0].sql(dialect)


def refusal(c: Candidate, catalog: Catalog, profile: DimensionProfile) -> str | None:
    """Why the candidate's slice value or groups cannot be asked (dptool.generate.values.unsayable: no question
    could name the value in one reading), with the dimension; None when they can."""
    values = c.slice.get("groups") or ([c.slice[c.dimension_column]] if c.dimension_column in c.slice else [])
    label = catalog.dimensions[c.skeleton.dimension].label
    others = [v for v, _ in profile.top_values]
    for value in values:
        why = unsayable(value, others, label)
        if why:
            return f"{why} ({label})"
    return None


def _jinja_string(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)


def instantiate(
    skeletons: list[Skeleton], catalog: Catalog, profiles: dict[str, DimensionProfile], seed: int, dialect: str,
    types: tuple[str, ...] | None = None, probes: dict | None = None, ids: Ids | None = None,
    support: bool = False, min_rows: int = MIN_GROUP_ROWS, refused: list | None = None,
) -> list[Candidate]:
    """Every compatible analysis type (or those in `types`) of every skeleton, made concrete.

    With `probes` (skeleton id -> dptool.generate.probe.Probe), a skeleton's rules must change a month of the
    window and, where the task reads one slice, that slice: a candidate no window or slice of which
    the rules change is not made. Each candidate's id names what it asks (`dptool.generate.ids`, from `ids`, the
    run's ids so far); a candidate asking what one made before asks already is not made again.
    With `support` (what `dptool generate` asks), candidates are drawn where their groups likely rest on enough rows
    (validate's thin_support drops the others): windows and slices of enough rows, breakdowns, rankings and trend
    months of at least `min_rows` rows (the minimum support's rows).
    A candidate whose slice value or group no question can name in one reading (`refusal`) is not made: its
    (reason, candidate) goes to `refused`, for the drop log.
    """
    ids = Ids() if ids is None else ids
    out = []
    for skeleton in skeletons:
        metric = catalog.metrics[skeleton.metric]
        temporal = catalog.dimensions.get(metric.period)
        # windows lie where the period has rows in every month, and inside the span where every table has data
        time = (temporal, profiles[temporal.id], data_span(catalog, metric, profiles)) if temporal else None
        for analysis_type in skeleton.analysis_types:
            if types is not None and analysis_type not in types:
                continue
            rng = random.Random(f"{seed}:{skeleton.id}:{analysis_type}")
            probe = (probes or {}).get(skeleton.id) if skeleton.rules else None
            candidate = _make(skeleton, analysis_type, catalog, profiles, time, rng, dialect, probe, support, min_rows)
            if candidate is None:
                continue
            why = refusal(candidate, catalog, profiles[skeleton.dimension])
            if why:
                if refused is not None:
                    refused.append((why, candidate))
                continue
            # a counterfactual withdrawing X from the rules {X} and from {X, Y} asks one question
            key = candidate_key(candidate, metric.domain)
            if ids.taken(key):
                continue
            candidate.task_id = ids(key)
            out.append(candidate)
    return out


def _make(skeleton: Skeleton, analysis_type: str, catalog: Catalog, profiles: dict[str, DimensionProfile],
          time: tuple[Dimension, DimensionProfile, tuple | None] | None, rng: random.Random, dialect: str,
          probe=None, support: bool = False, min_rows: int = MIN_GROUP_ROWS) -> Candidate | None:
    dim = catalog.dimensions[skeleton.dimension]
    profile = profiles[dim.id]
    metric = catalog.metrics[skeleton.metric]
    if _constant_under_rules(skeleton, analysis_type, catalog, [dim.column] + ([time[0].column] if time else [])):
        return None
    where: list[str] = []
    slice_: dict = {}
    window = None
    encoding = time[1].encoding if time else "timestamp"
    if time:
        spans = windows(time[1], time[2])
        # rankings, breakdowns and trends read a longer span, so that every group or month holds rows
        long = analysis_type in ("ranking", "decomposition", "trend_analysis", "comparison", "significance_testing")
        pool = [w for w in spans if w.months >= (6 if long else 3)]
        if analysis_type in ("ranking", "significance_testing"):
            # whole years where there are: a test or a ranking of groups needs rows in every group
            pool = [w for w in pool if w.months >= 12] or pool
        if analysis_type == "trend_analysis":
            pool = [w for w in pool if w.months >= 6]
            if not pool:
                return None
        pool = pool or spans
        if probe is not None and spans:
            # a task that reads one slice (or a pair) needs a window where the rule changes a slice it can read
            values = _readable_values(skeleton, dim, profile, catalog, min_rows) if analysis_type in SLICED else None
            pool = [w for w in pool if probe.changed(_months(w), values)]
            if not pool:
                return None
        if pool and support:
            # a window whose groups would rest on too few rows gives a task validation drops (thin_support):
            # windows where the group the task reads (a trend: each month) likely holds enough rows; else the whole
            # history (a trend: none)
            need = SUPPORT_MARGIN * min_rows / _group_share(analysis_type, dim, profile, skeleton, catalog, min_rows)
            per = (lambda w: w.months) if analysis_type == "trend_analysis" else (lambda w: 1)
            pool = [w for w in pool if _window_rows(time[1], w) / per(w) >= need]
            if not pool and analysis_type == "trend_analysis":
                return None
        if analysis_type == "ranking" and dim.kind != "temporal":
            # a ranking only where enough groups likely qualify (_ranking_k): not a window where none can be asked
            pool = [w for w in pool if _ranking_k(skeleton, profile, catalog, w, time[1], min_rows) is not None]
            if not pool:
                return None
        if pool:
            window = rng.choice(pool)
            where += window_predicates(time[0].column, window, encoding, dialect, time[0].quote)
            slice_["window"] = {"start": window.start.isoformat(), "end": window.end.isoformat(),
                                "label": window.label}

    # no window (no date, or none where every table has data: the task reads the whole history)
    if probe is not None and window is None and not probe.changed():
        return None

    governing = tuple(r.id for r in catalog.governing_rules(metric.id))

    def make(shape: str, group_by=(), k=None, min_rows=None, **extra) -> Candidate:
        extra.setdefault("rule_scope", rule_scope(skeleton.rules, governing))
        return Candidate(skeleton, analysis_type, where, list(group_by), shape, k, min_rows, slice_, window,
                         encoding=encoding, **extra)

    if analysis_type == "trend_analysis":
        if dim.kind != "temporal":
            return None
        return make("series", period=period_expression(dim.column, encoding, dialect, dim.quote))
    if analysis_type == "ranking":
        if dim.kind == "temporal" or profile.distinct < 3:
            return None
        k = _ranking_k(skeleton, profile, catalog, window, time[1] if time else None, min_rows)
        if k is None:
            return None
        slice_["min_group_rows"] = min_rows
        return make("ranking", [dim.column], k, min_rows)
    if analysis_type == "decomposition":
        if dim.kind == "temporal" or not 2 <= profile.distinct <= MAX_BREAKDOWN_GROUPS:
            return None
        if not support:
            return make("grouped", [dim.column])
        # every group with enough rows: a breakdown row resting on a handful of rows is noise (thin_support)
        slice_["min_group_rows"] = min_rows
        return make("grouped", [dim.column], min_rows=min_rows)
    if analysis_type in ("comparison", "significance_testing"):
        if dim.kind == "temporal":
            return None
        # the test reads n, mean and variance of the measure of an avg(): a rule may rewrite the value into
        # something else (a ratio of sums), which the probe's compiled SQL shows
        known = probe.value_is_avg if probe is not None else None
        if analysis_type == "significance_testing" and not (_is_avg(metric.value) if known is None else known):
            return None
        big = _big_enough(profile, time[1] if time else None, window, min_rows) if support else (lambda value: True)
        pair = _pair(skeleton, dim, profile, catalog, rng, _per_value(probe.changed if probe else None, window),
                     _both(_per_value(probe.has_value if probe else None, window), big), big, min_rows)
        if pair is None:
            return None
        where.append(one_of(dim.column, list(pair), dialect, dim.quote))
        slice_["groups"] = list(pair)
        return make("stats" if analysis_type == "significance_testing" else "grouped", [dim.column])
    # point query, threshold crossing, counterfactual: one value of one slice
    if dim.kind != "temporal":
        value = _slice_value(skeleton, dim, profile, catalog, rng,
                             _both(_per_value(probe.changed if probe else None, window),
                                   _big_enough(profile, time[1] if time else None, window, min_rows) if support
                                   else (lambda value: True)), min_rows)
        if value is None:
            return None
        where.append(one_of(dim.column, [value], dialect, dim.quote))
        slice_[dim.column] = value
    if analysis_type == "counterfactual":
        if not skeleton.rules:
            return None
        # "suppose X had never been adopted, with every other policy still in force": the base applies every
        # rule that governs the metric, the gold all of them but X
        withdrawn = rng.choice(skeleton.rules)
        slice_["withdrawn_rule"] = withdrawn
        return make("value", gold_rules=tuple(r for r in governing if r != withdrawn), base_rules=governing,
                    rule_scope="all", withdrawn_rule=withdrawn)
    return make("value")


def _constant_under_rules(skeleton: Skeleton, analysis_type: str, catalog: Catalog, columns: list[str]) -> bool:
    """Whether a rule in force sets a column the task slices, groups or windows by to a constant: the slice would
    hold every row or none, the breakdown one group. In force: the skeleton's rules, and for a counterfactual
    (whose base applies them all) every rule that governs the metric."""
    rules = set(skeleton.rules)
    if analysis_type == "counterfactual":
        rules |= {r.id for r in catalog.governing_rules(skeleton.metric)}
    return any(col in catalog.rules[r].constants for r in rules if r in catalog.rules for col in columns)


def constant_notes(catalog: Catalog) -> list[str]:
    """One line per rule that sets a column to a constant: what `instantiate` does not ask where it is in force."""
    return [f"note: rule {r.id} sets {', '.join(r.constants)} to a constant: no question slices, groups or windows "
            f"{', '.join(r.modifies)} by {'them' if len(r.constants) > 1 else 'it'} where the rule is in force"
            for r in sorted(catalog.rules.values(), key=lambda r: r.id) if r.constants]


def _window_rows(time: DimensionProfile, window: Window) -> int:
    """Rows of the metric's period table dated in the window (the period's profile)."""
    months = _months(window)
    return sum(n for y, m, n in time.months if (y, m) in months)


def _group_share(analysis_type: str, dim: Dimension, profile: DimensionProfile, skeleton, catalog,
                 min_rows: int = MIN_GROUP_ROWS) -> float:
    """The share of the window's rows the smallest group a task reads likely holds: all of them for a task of no
    slice, a typical frequent value's share for a slice or a pair, the smallest group's for a breakdown."""
    if dim.kind == "temporal" or analysis_type == "ranking":
        return 1.0  # a trend's months: the window's rows spread over them (checked by support); a ranking: _ranking_k
    total = sum(n for _, n in profile.top_values)
    if not total:
        return 1.0
    if analysis_type == "decomposition":
        return max(min(n for _, n in profile.top_values) / total, 1e-6)
    named = _named_value(skeleton, dim, catalog)
    shares = sorted(n / total for v, n in profile.top_values
                    if v in (_frequent(profile, _fact_rows(skeleton, catalog), min_rows) if named is None else [named]))
    return max(shares[len(shares) // 2] if shares else 1.0 / max(1, profile.distinct), 1e-6)


def rule_scope(rules: tuple[str, ...], governing: tuple[str, ...]) -> str:
    """"all" when `rules` are every rule that governs the metric, "none" when empty, else "subset"."""
    if set(rules) == set(governing):
        return "all"
    return "subset" if rules else "none"


def _ranking_k(skeleton, profile: DimensionProfile, catalog: Catalog, window: Window | None,
               time: DimensionProfile | None, min_rows: int = MIN_GROUP_ROWS) -> int | None:
    """How many groups a ranking asks for: 5 where more than 6 groups likely hold `min_rows` rows in the
    window, 3 where 3 to 6 do, none where fewer (the question must not ask for more groups than qualify).

    A group's rows in the window are estimated from the profiles (its share of the dimension's rows, times
    the metric's rows, times the window's share of the period's rows), with a margin for the rows a rule
    excludes; enrich still drops a ranking whose gold or base holds fewer than k groups.
    """
    total = sum(n for _, n in profile.top_values)
    share = 1.0
    if window is not None and time is not None:
        months = _months(window)
        rows = sum(n for y, m, n in time.months)
        share = sum(n for y, m, n in time.months if (y, m) in months) / rows if rows else 0.0
    fact_rows = _fact_rows(skeleton, catalog) or total
    likely = sum(1 for _, n in profile.top_values if total and fact_rows * n / total * share >= 1.25 * min_rows)
    if likely > 6:
        return 5
    return 3 if likely >= 3 else None


def plausible_types(skeleton: Skeleton, catalog: Catalog, cardinality: dict[str, int], support: bool = False,
                    min_rows: int = MIN_GROUP_ROWS) -> int:
    """How many of a skeleton's analysis types can make a candidate at all (what a target counts)."""
    distinct = cardinality.get(skeleton.dimension, 0)
    temporal = skeleton.dimension_kind == "temporal"
    # where the metric's rows spread over the dimension's values leave a typical value fewer rows than a task
    # needs (thin_support), a task of one slice or a pair is unlikely: it does not count
    rows = catalog.dimension_weight.get(catalog.metrics[skeleton.metric].period, 0)
    thin = support and not temporal and bool(rows) and distinct > 0 and \
        rows / distinct < SUPPORT_MARGIN * min_rows
    possible = {
        "counterfactual": bool(skeleton.rules),
        "significance_testing": not temporal and distinct >= 2 and _is_avg(catalog.metrics[skeleton.metric].value),
        "comparison": not temporal and distinct >= 2,
        "ranking": not temporal and distinct >= 3,
        "decomposition": not temporal and 2 <= distinct <= MAX_BREAKDOWN_GROUPS,
        **({t: False for t in SLICED} if thin else {}),
    }
    return sum(1 for t in skeleton.analysis_types if possible.get(t, True))


def _is_avg(value: str) -> bool:
    try:
        tree = sqlglot.parse_one(value)
    except sqlglot.errors.ParseError:
        return False
    return isinstance(tree, exp.Avg)


def gold_value_is_avg(compiled_sql: str, dialect: str) -> bool:
    """Is the value of a compiled dptool.gold query's rule-modified variant (CTE dptool_gold) an avg()?

    The SQL dptool.gold rendered is enough (`Compiled.own_sql`): the ephemeral models dbt injects in front of
    it are most of the text a parser would read."""
    if "avg" not in compiled_sql.lower():  # sqlglot reads an exp.Avg only from the word avg: no parse needed
        return False
    select = _gold_cte_select(compiled_sql, dialect)
    if not isinstance(select, exp.Select):
        return False
    value = next((e for e in select.expressions if e.alias_or_name == "value"), None)
    return isinstance(value, exp.Alias) and isinstance(value.this, exp.Avg)


# how dptool.gold writes its rule-modified variant: the CTE's body ends where the next CTE or the union begins
_GOLD_CTE = re.compile(r"\ndptool_gold as \(\n(.*?)\n\)(?:,\ndptool_rule_free as \(|\nselect 'base' as variant)",
                       re.DOTALL)


def _gold_cte_select(compiled_sql: str, dialect: str):
    """The parsed body of a compiled dptool.gold query's CTE dptool_gold (None when there is none): that body
    alone when it can be cut out as dptool.gold writes it, and read from the whole query otherwise."""
    found = _GOLD_CTE.findall(compiled_sql)
    if len(found) == 1:
        try:
            return sqlglot.parse_one(found[0], read=dialect)
        except sqlglot.errors.ParseError:
            pass
    try:
        tree = sqlglot.parse_one(compiled_sql, read=dialect)
    except sqlglot.errors.ParseError:
        return None
    cte = next((c for c in tree.find_all(exp.CTE) if c.alias == "dptool_gold"), None)
    return cte.this if cte is not None else None


def _frequent(profile: DimensionProfile, fact_rows: int = 0, min_rows: int = MIN_GROUP_ROWS) -> list:
    """Up to 8 slice values worth a task: values of many rows, or whose share of a small lookup table
    stands for many of the metric's rows (`fact_rows`: Berka's eight regions live in a 77-row district
    table, yet each holds thousands of transactions)."""
    total = sum(n for _, n in profile.top_values) if profile.distinct <= len(profile.top_values) else 0
    need = MIN_SLICE_ROWS * min_rows / MIN_GROUP_ROWS
    return [v for v, n in profile.top_values if n >= need or (total and n / total * fact_rows >= need)][:8]


def _fact_rows(skeleton: Skeleton, catalog: Catalog) -> int:
    """Rows of the metric's largest table, as profiled (0 when not known)."""
    dims = catalog.dimensions_of(catalog.metrics[skeleton.metric])
    return max((catalog.dimension_weight.get(d.id, 0) for d in dims), default=0)


SLICED = ("point_query", "threshold_crossing", "counterfactual", "comparison", "significance_testing")


def _readable_values(skeleton, dim, profile, catalog, min_rows: int = MIN_GROUP_ROWS) -> list | None:
    """The slice values a sliced task may read: the value a conditional rule names, or frequent ones."""
    if dim.kind == "temporal":
        return None
    named = _named_value(skeleton, dim, catalog)
    return [named] if named is not None else _frequent(profile, _fact_rows(skeleton, catalog), min_rows)


def _named_value(skeleton, dim, catalog):
    """The value of this dimension that a rule of the skeleton is conditional on (its first such rule)."""
    return next((catalog.rules[r].applies_when[dim.column] for r in skeleton.rules
                 if dim.column in catalog.rules[r].applies_when), None)


def _months(window: Window) -> set[tuple[int, int]]:
    out, y, m = set(), window.start.year, window.start.month
    while (y, m) < (window.end.year, window.end.month):
        out.add((y, m))
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return out


def _per_value(check, window: Window | None):
    """A test of one slice value in the window: `check` is a Probe method (changed, has_value); without a
    probe (None), every value passes."""
    if check is None:
        return lambda value: True
    months = _months(window) if window else None
    return lambda value: check(months, [value])


def _slice_value(skeleton, dim, profile, catalog, rng, changes, min_rows: int = MIN_GROUP_ROWS):
    # a rule conditional on this dimension is tested on the value it names
    wanted = _named_value(skeleton, dim, catalog)
    if wanted is not None:
        return wanted if changes(wanted) else None
    frequent = _frequent(profile, _fact_rows(skeleton, catalog), min_rows)
    frequent = [v for v in frequent if changes(v)]
    return rng.choice(frequent) if frequent else None


def _both(first, second):
    return lambda value: first(value) and second(value)


def _big_enough(profile: DimensionProfile, time: DimensionProfile | None, window: Window | None,
                min_rows: int = MIN_GROUP_ROWS):
    """A test of a slice value: do the metric's rows in the window likely hold enough of it (its share of the
    dimension's rows, times the period's rows in the window), with a margin for the rows a rule excludes?"""
    total = sum(n for _, n in profile.top_values)
    rows = (_window_rows(time, window) if window else sum(n for *_, n in time.months)) if time else 0
    if not total or not rows:
        return lambda value: True
    share = {v: n / total for v, n in profile.top_values}
    return lambda value: rows * share.get(value, 0.0) >= SUPPORT_MARGIN * min_rows


def _pair(skeleton, dim, profile, catalog, rng, changes, has_value, big=None,
          min_rows: int = MIN_GROUP_ROWS) -> tuple | None:
    frequent = _frequent(profile, _fact_rows(skeleton, catalog), min_rows)
    first = _named_value(skeleton, dim, catalog)
    if first is None:
        # the rule must change one of the two groups, and both must likely rest on enough rows
        changed = [v for v in frequent if changes(v) and (big is None or big(v))]
        if len(frequent) < 2 or not changed:
            return None
        first = rng.choice(changed)
    others = [v for v in frequent if v != first and has_value(v)]
    if not others:
        return None
    return (first, rng.choice(others))
