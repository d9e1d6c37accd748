"""Stage 6: analysis-type answers (DI-Bench Appendix A) from the rows a gold model materialized."""

from __future__ import annotations

import math
from contextlib import suppress
from decimal import ROUND_HALF_EVEN, Decimal

from dptool.answers import allowed_error
from dptool.generate.instantiate import Candidate
from dptool.generate.profile import plain
from dptool.project.catalog import Metric

DIGITS = 6  # the numbers an answer shows keep six decimals (a trend's change in percent too); decisions read more
P_DIGITS = 4  # a p-value's decimals: the scorer matches p-values within 0.01


class NotScorable(Exception):
    """The rows give no answer a scorer could check (an empty ranking, a NULL value)."""


def answer(c: Candidate, metric: Metric, columns: list[str], rows: list[tuple]) -> dict:
    """The gold and base answers, answer format and tolerance of a built candidate.

    `rows` are the gold model's rows; the `variant` column tells base from gold. A counterfactual's rows hold a
    third variant, `rule_free` (no rule applied: its base applies every rule), whose answer goes to "rule_free".
    """
    by_variant: dict[str, list[dict]] = {"base": [], "gold": [], "rule_free": []}
    for row in rows:
        # as the slice holds values (a DECIMAL group key is a float there), and as JSON can write them
        record = {c: v if c == "period" else plain(v) for c, v in zip(columns, row, strict=True)}
        by_variant[record.pop("variant")].append(record)
    fmt = {"unit": metric.unit, "format": metric.format}
    kind = c.analysis_type
    if kind in ("point_query", "counterfactual"):
        gold, base = ({"value": _single(by_variant[v])} for v in ("gold", "base"))
        result = _task(gold, base, {"type": "value", **fmt}, metric)
        if by_variant["rule_free"]:
            with suppress(NotScorable):  # no value without the rules: the task stands, with no rule-free answer
                result["rule_free"] = {"value": _single(by_variant["rule_free"])}
        return result
    if kind == "ranking":
        gold = _ranking(by_variant["gold"], c.group_by[0], strict=True, k=c.k)
        base = _ranking(by_variant["base"], c.group_by[0], strict=False, k=c.k)
        return _task(gold, base, {"type": "ranking", "key": c.group_by[0], "k": c.k, **fmt}, metric)
    if kind == "threshold_crossing":
        gold, base = (_single(by_variant[v], exact=True) for v in ("gold", "base"))
        tol = tolerance(metric)
        threshold = threshold_between(base, gold, tol) if c.rules else _round_threshold(gold, tol)
        return _task(_verdict(gold, threshold), _verdict(base, threshold),
                     {"type": "threshold", "comparison": "exceeds", **fmt}, metric)
    if kind == "trend_analysis":
        gold, base = (_trend(by_variant[v], c.encoding) for v in ("gold", "base"))
        return _task(gold, base, {"type": "trend", "grain": "month", "flat_band_pct": FLAT_BAND_PCT, **fmt}, metric)
    if kind == "comparison":
        key = c.group_by[0]
        gold, base = (_comparison(by_variant[v], key, c.slice["groups"]) for v in ("gold", "base"))
        return _task(gold, base, {"type": "comparison", "key": key, **fmt}, metric)
    if kind == "significance_testing":
        key = c.group_by[0]
        gold, base = (_significance(by_variant[v], key, c.slice["groups"]) for v in ("gold", "base"))
        return _task(gold, base, {"type": "significance", "key": key, "alpha": ALPHA, **fmt}, metric)
    if kind == "decomposition":
        key = c.group_by[0]
        gold, base = (_breakdown(by_variant[v], key) for v in ("gold", "base"))
        return _task(gold, base, {"type": "breakdown", "key": key, **fmt}, metric)
    raise ValueError(f"unknown analysis type {kind!r}")


ALPHA = 0.05
TEST_NAME = "Welch's t-test (two-tailed)"
# A trend's direction is the sign of the least-squares line through the monthly values, flat when the line
# changes by less than FLAT_BAND_PCT of the average monthly value from the first month to the last. First
# against last month alone turns on two noisy points; the line reads every month. A series whose line ends
# within BORDER_PCT points of the band's edge is no task: rounding could put it on either side.
FLAT_BAND_PCT = 5.0
BORDER_PCT = 0.5
TREND_RULE = (f"the least-squares line through the monthly values decides: flat when it changes by less than "
              f"{FLAT_BAND_PCT:g}% of the average monthly value from the first month to the last, else increasing "
              "or decreasing as it rises or falls")


def period_label(value, encoding: str = "") -> str:
    """A period as YYYY-MM, from a month-truncated timestamp or date, or a YYMM number (YYMMDD columns)."""
    if isinstance(value, int | float | Decimal) or encoding == "yymmdd":
        yymm = int(value)
        return f"{1900 + yymm // 100}-{yymm % 100:02d}"
    return f"{value.year:04d}-{value.month:02d}"


def _trend(records: list[dict], encoding: str) -> dict:
    # decided on the unrounded values (float noise set aside): rounding a small share to six decimals moves the
    # total change by whole hundredths of a point and can make a tie of the peak; only what is shown is rounded
    series = [(period_label(r["period"], encoding), _exact(r["value"])) for r in records if r["value"] is not None]
    series.sort()
    if len(series) < 3:
        raise NotScorable(f"a trend needs 3 periods with values, got {len(series)}")
    first, last = series[0][1], series[-1][1]
    if first == 0:
        raise NotScorable("the first period is 0: the change has no percentage")
    change = _number((last - first) / abs(first) * 100)
    peak = max(series, key=lambda p: (p[1], p[0]))
    if sum(1 for _, v in series if v == peak[1]) > 1:
        raise NotScorable("two periods share the peak value")
    return {"direction": trend_direction(series), "total_change_pct": change, "peak_period": peak[0]}


def trend_direction(series: list[tuple[str, float]]) -> str:
    """increasing, decreasing or flat by TREND_RULE, from (YYYY-MM, value) pairs in order."""
    xs = [int(p[:4]) * 12 + int(p[5:7]) for p, _ in series]  # months, so a month without rows keeps its place
    ys = [v for _, v in series]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    if mean_y == 0:
        raise NotScorable("the average monthly value is 0: the flat band has no width")
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / \
        sum((x - mean_x) ** 2 for x in xs)
    line_change_pct = slope * (xs[-1] - xs[0]) / abs(mean_y) * 100
    if abs(abs(line_change_pct) - FLAT_BAND_PCT) < BORDER_PCT:
        raise NotScorable("the trend line ends at the edge of the flat band: its direction is a coin toss")
    if abs(line_change_pct) < FLAT_BAND_PCT:
        return "flat"
    return "increasing" if line_change_pct > 0 else "decreasing"


def _by_group(records: list[dict], key: str) -> dict:
    return {r[key]: r for r in records}


def _comparison(records: list[dict], key: str, groups: list) -> dict:
    rows = _by_group(records, key)
    a, b = groups
    if a not in rows or b not in rows:
        raise NotScorable("a compared group has no rows")
    exact_a, exact_b = _exact(rows[a]["value"]), _exact(rows[b]["value"])
    va, vb = _number(exact_a), _number(exact_b)
    if va == vb:  # an answer whose values are equal as shown cannot say one is higher
        raise NotScorable("the two groups are equal")
    return {"group_a": a, "group_b": b, "value_a": va, "value_b": vb, "higher": a if exact_a > exact_b else b}


def _significance(records: list[dict], key: str, groups: list) -> dict:
    rows = _by_group(records, key)
    a, b = groups
    if a not in rows or b not in rows:
        raise NotScorable("a compared group has no rows")
    ra, rb = rows[a], rows[b]
    if min(ra["n"] or 0, rb["n"] or 0) < 2 or not ra["variance"] or not rb["variance"]:
        raise NotScorable("a group has fewer than 2 values or no variance")
    pvalue = welch_p_value(float(ra["mean"]), math.sqrt(float(ra["variance"])), int(ra["n"]),
                           float(rb["mean"]), math.sqrt(float(rb["variance"])), int(rb["n"]))
    if math.isnan(pvalue):
        raise NotScorable("the test gives no p-value")
    exact = _exact(pvalue)
    p = _number(exact, P_DIGITS)
    # the verdict is the exact p-value's; where the p-value shown would say otherwise (0.04996 shows as 0.05),
    # the gold would contradict itself
    if (p < ALPHA) != (exact < ALPHA):
        raise NotScorable(f"the p-value {exact:.6g} rounds to alpha ({ALPHA:g}): the verdict and the value shown "
                          "would disagree")
    return {"significant": exact < ALPHA, "p_value": p, "test_name": TEST_NAME,
            "group_a": a, "group_b": b, "mean_a": _number(ra["mean"]), "mean_b": _number(rb["mean"])}


def welch_p_value(mean_a: float, std_a: float, n_a: int, mean_b: float, std_b: float, n_b: int) -> float:
    """Two-sided p-value of Welch's t-test from each group's mean, sample standard deviation and size, computed
    as scipy.stats.ttest_ind_from_stats(equal_var=False) computes it, from scipy.special alone (importing
    scipy.stats costs a second in every generate)."""
    from scipy.special import stdtr

    va, vb = std_a**2 / n_a, std_b**2 / n_b
    t = (mean_a - mean_b) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (n_a - 1) + vb**2 / (n_b - 1))
    return float(2 * stdtr(df, -abs(t)))


def _breakdown(records: list[dict], key: str) -> list[dict]:
    if not records:
        raise NotScorable("the breakdown is empty")
    rows = [{key: r[key], "value": _number(r["value"]) if r["value"] is not None else None} for r in records]
    if all(r["value"] is None for r in rows):
        raise NotScorable("every group is NULL")
    return sorted(rows, key=lambda r: (r[key] is None, str(r[key])))


def tolerance(metric: Metric) -> dict:
    """How far a numeric answer may be from the gold: 0.1 %, or 0.05 points of a percent, 0.005 of a number."""
    return {"rel_tol": 0.001, "abs_tol": 0.0005 if metric.format == "percent" else 0.005}


def _task(gold, base, fmt, metric: Metric) -> dict:
    return {"gold": gold, "base": base, "answer_format": fmt, "tolerance": tolerance(metric)}


def _exact(value) -> float:
    """A value as every decision of an answer reads it: unrounded, but for float noise.

    Sums of floats differ in their last bits with the order a parallel engine adds them in: snapped to 12
    significant digits, the same data always gives the same value (and an average of cents that is exactly
    half a unit of the 6th decimal always rounds the same way).
    """
    if value is None:
        raise NotScorable("the value is NULL")
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        raise NotScorable(f"the value is {value}")
    return float(Decimal(f"{value:.12g}")) + 0.0  # no -0.0


def _number(value, digits: int = DIGITS) -> float:
    """A value as an answer shows it: `digits` decimals (of the value snapped by _exact), half to even."""
    snapped = Decimal(f"{_exact(value):.12g}")
    return float(snapped.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_EVEN)) + 0.0  # no -0.0


def _single(records: list[dict], exact: bool = False) -> float:
    if len(records) != 1:
        raise NotScorable(f"expected one row, got {len(records)}")
    return (_exact if exact else _number)(records[0]["value"])


def _ranking(records: list[dict], key: str, strict: bool, k: int | None = None) -> list[dict]:
    if not records:
        raise NotScorable("the ranking is empty")
    if k is not None and len(records) < k:  # the question asks for k: fewer groups qualify
        raise NotScorable("fewer groups qualify than the ranking asks for")
    ordered = [{key: r[key], "value": _number(r["value"])} for r in sorted(records, key=lambda r: r["rank"])]
    values = [r["value"] for r in ordered]
    # ties as shown: an order that the values shown cannot tell apart is no answer (the order itself is the exact
    # values', from the SQL's rank)
    if strict and len(set(values)) < len(values):
        raise NotScorable("tied values make the order of the ranking ambiguous")
    return ordered


def threshold_between(a: float, b: float, tol: dict | None = None) -> float:
    """A round number strictly between two values: the coarsest step that still separates them.

    With `tol` (an answer's tolerance) it is also outside the tolerance of both: a value the scorer accepts is
    then on the side of the threshold its verdict says (NotScorable when the values are too close for that).
    """
    lo, hi = min(a, b), max(a, b)
    if lo == hi:
        raise NotScorable("base and gold agree; no threshold separates them")
    step = 10.0 ** math.floor(math.log10(hi - lo))
    for _ in range(16):
        t = round(round((lo + hi) / 2 / step) * step, 12)
        if lo < t < hi and _clear(t, (lo, hi), tol):
            return t
        step /= 10
    if _clear((lo + hi) / 2, (lo, hi), tol):
        return (lo + hi) / 2
    raise NotScorable("base and gold are within the answer's tolerance of any threshold between them")


def _round_threshold(value: float, tol: dict | None = None) -> float:
    # without a rule there is no base to separate from: a round number near the value, outside its tolerance
    if value == 0 and _clear(1.0, (value,), tol):
        return 1.0
    step = 10.0 ** (math.floor(math.log10(abs(value))) - 1) if value else 1.0
    t = round(round(value / step) * step, 12)
    if t != value and _clear(t, (value,), tol):
        return t
    side = 1.0 if t >= value else -1.0  # away from the value, on the side rounding chose, in steps no finer
    if tol:  # than the tolerance
        step = max(step, 10.0 ** math.floor(math.log10(allowed_error(value, tol))))
    t = round((math.ceil if side > 0 else math.floor)(value / step) * step, 12)
    while t == value or not _clear(t, (value,), tol):
        t = round(t + side * step, 12)
    return t


def _clear(threshold: float, values: tuple[float, ...], tol: dict | None) -> bool:
    """Whether the scorer, taking each value as a gold, would not accept the threshold for it."""
    return tol is None or all(abs(threshold - v) > allowed_error(v, tol) for v in values)


def _verdict(value: float, threshold: float) -> dict:
    # the unrounded value decides; the threshold is clear of it by more than the tolerance, so the value shown
    # is on the same side
    return {"value": _number(value), "threshold": threshold, "result": "PASS" if value > threshold else "FAIL"}
