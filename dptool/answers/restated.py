"""Facts an answer restates beside what it is asked are checked against the gold: a threshold's margin, a
comparison's difference or ratio, a significance test's means, difference and alpha. A restated fact that
contradicts the answer makes it wrong (contradictory), whatever its verdict says; one the gold cannot check (a
t statistic, the degrees of freedom) is free.
"""

from __future__ import annotations

from typing import Any

from dptool.answers.numbers import allowed_error, to_number
from dptool.answers.verdict import CONTRADICTED, Wrong, field_name, fmt, short

MARGINS = frozenset(field_name(f) for f in [
    "margin", "difference", "diff", "gap", "delta", "distance", "excess", "headroom", "over_by", "above_by",
    "amount_over", "amount_above", "exceeds_by", "margin_over_threshold", "difference_from_threshold"])
RELATIVE_MARGINS = frozenset(field_name(f) for f in ["margin_pct", "margin_percent", "pct_above", "percent_above",
                                                     "relative_margin", "pct_over", "percent_over"])
SHORTFALLS = frozenset(field_name(f) for f in ["shortfall", "under_by", "below_by", "missed_by"])
DIFFERENCES = frozenset(field_name(f) for f in [
    "difference", "diff", "gap", "delta", "absolute_difference", "abs_difference", "abs_diff", "mean_difference",
    "difference_in_means", "mean_diff"])
RATIOS = frozenset(field_name(f) for f in ["ratio", "ratio_a_b", "ratio_a_to_b"])
RELATIVE = frozenset(field_name(f) for f in [
    "pct_difference", "percent_difference", "percentage_difference", "relative_difference", "difference_pct",
    "diff_pct", "pct_diff", "relative_diff", "difference_percent", "pct_change", "percent_change"])
# what a significance answer may state that its gold cannot check
TEST_STATISTICS = frozenset(field_name(f) for f in [
    "t", "t_stat", "t_statistic", "t_value", "statistic", "test_statistic", "df", "dof", "degrees_of_freedom",
    "n", "n_a", "n_b", "count_a", "count_b", "std_a", "std_b", "sd_a", "sd_b", "stddev_a", "stddev_b", "var_a",
    "var_b", "variance_a", "variance_b", "se", "standard_error", "ci", "ci_low", "ci_high", "confidence_interval",
    "effect_size", "cohens_d", "cohen_d", "confidence_level", "welch_t", "t_score", "z", "z_score"])
# what a trend answer may state beside its direction, change and peak
TREND_FACTS = frozenset(field_name(f) for f in [
    "slope", "first_value", "last_value", "start_value", "end_value", "peak_value", "min_value", "max_value",
    "lowest_value", "average", "mean", "average_value", "mean_value", "first_month", "last_month", "first_period",
    "last_period", "lowest_period", "low_period", "trough_period", "months", "n_months", "r2", "r_squared",
    "values", "monthly_values", "monthly", "series", "monthly_series"])


def from_values(values: list[float], tol: dict) -> float:
    """The largest error of a fact derived from values each within the tolerance: their errors together."""
    return sum(allowed_error(v, tol) for v in values) + float(tol.get("abs_tol", 0.0))


def agrees(answer: dict, names: frozenset[str], candidates: list[float], limit: float | None, what: str) -> None:
    """Raise Wrong (contradictory) when a field named in `names` holds a number farther than `limit` from every
    one of `candidates` (None: a ratio's limit, a tenth of each candidate, as restated ratios are rounded)."""
    for key, x in answer.items():
        if field_name(key) not in names:
            continue
        given = to_number(x, str(key)).value
        if given is None:
            continue
        if not any(abs(given - c) <= (RATIO_SHARE * abs(c) + RATIO_FLOOR if limit is None else limit)
                   for c in candidates):
            shown = ", ".join(fmt(c) for c in candidates[:2])
            raise Wrong(f"contradictory answer: {key!r} {short(x)} is not {what} ({shown})", CONTRADICTED)


RATIO_SHARE, RATIO_FLOOR = 0.1, 0.005  # "4%" restates 3.77 %; a wrong sign, or a ratio of others, is far off


def margin(answer: dict, value: float, threshold: float, percent: bool, tol: dict) -> None:
    """A threshold's margin is the value less the threshold (a shortfall the threshold less the value); a share's
    in either scale."""
    scales = (1.0, 100.0) if percent else (1.0,)
    limit = from_values([value, threshold], tol) * max(scales)
    agrees(answer, MARGINS, [(value - threshold) * s for s in scales], limit, "the value less the threshold")
    agrees(answer, SHORTFALLS, [(threshold - value) * s for s in scales], limit, "the threshold less the value")
    if threshold:
        agrees(answer, RELATIVE_MARGINS, [(value - threshold) / threshold * s for s in (1.0, 100.0)], None,
               "the value less the threshold, relative to the threshold")


def difference(answer: dict, a: float, b: float, percent: bool, tol: dict, relative: bool = True) -> None:
    """A difference of two values (the answer's first less its second, or its size), their ratio and their
    relative difference (to either, as a fraction or in percent)."""
    scales = (1.0, 100.0) if percent else (1.0,)
    agrees(answer, DIFFERENCES, [d * s for d in (a - b, abs(a - b)) for s in scales],
           from_values([a, b], tol) * max(scales), "the first value less the second")
    if not relative:
        return
    ratios = [a / b] if b else []
    ratios += [b / a] if a else []
    agrees(answer, RATIOS, ratios, None, "the ratio of the two values")
    rel = [d / base * s for d in (a - b, b - a) for base in (a, b) if base for s in (1.0, 100.0)]
    agrees(answer, RELATIVE, rel, None, "the relative difference of the two values")


def same_alpha(answer: dict, alpha: Any) -> None:
    """A restated significance level must be the task's."""
    for key, x in answer.items():
        if field_name(key) in ("alpha", "significancelevel", "level") and alpha is not None:
            given = to_number(x, str(key))
            level = given.value / 100 if given.percent or (given.value or 0) > 1 else given.value
            if level is None or abs(level - float(alpha)) > 1e-9:
                raise Wrong(f"contradictory answer: {key!r} {short(x)} is not the asked alpha {alpha}", CONTRADICTED)


__all__ = ["DIFFERENCES", "MARGINS", "RATIOS", "RELATIVE", "RELATIVE_MARGINS", "SHORTFALLS", "TEST_STATISTICS",
           "TREND_FACTS", "agrees", "difference", "from_values", "margin", "same_alpha"]
