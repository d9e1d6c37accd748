"""The typed comparators of the analysis formats: value, threshold, trend, comparison and significance (ranking
and breakdown are in rows), each raising Wrong with its reason when the answer does not match its gold."""

from __future__ import annotations

import json
import re
from typing import Any

from dptool.answers.dates import parse_period
from dptool.answers.groups import Keys, group_namer, show
from dptool.answers.hedges import (
    DIRECTIONS,
    VERDICTS,
    nested_claims,
    no_other_verdict_in_text,
    offers_alternatives,
    one_verdict,
    top_fields,
)
from dptool.answers.numbers import PLUS_MINUS, allowed_error, check_number, not_finite, numbers_in, to_number
from dptool.answers.parse import Text
from dptool.answers.restated import (
    DIFFERENCES,
    MARGINS,
    RATIOS,
    RELATIVE,
    RELATIVE_MARGINS,
    SHORTFALLS,
    TEST_STATISTICS,
    TREND_FACTS,
    difference,
    margin,
    same_alpha,
)
from dptool.answers.rows import breakdown, ranking, rows_of
from dptool.answers.scenarios import no_second_number
from dptool.answers.shape import field, numeric, percent_scale, require_dict
from dptool.answers.verdict import (
    CONTRADICTED,
    HEDGED,
    MALFORMED,
    NO_ANSWER,
    ROWS,
    VALUE,
    VERDICT,
    Wrong,
    field_name,
    fold,
    short,
)
from dptool.answers.verdict import fmt as number_text

P_VALUE_TOLERANCE = 0.01
# a group the data calls NULL may only be written as a word inside JSON ({"NULL": 1.2} has a string key)
# ---- one value -----------------------------------------------------------------------------------------------


def value(answer: Any, gold: dict, fmt: dict, tol: dict, question: str = "") -> None:
    """One number: {"value": 7.96}, {"avg_days": 7.96}, 7.96, "7.96 days", "–8,182.15 CZK"; a second number
    beside it is another scenario, and a numerator and denominator must give the value."""
    if isinstance(answer, Text):
        if not_finite(answer.text):
            raise Wrong(f"value: {short(answer.text)} is not a number", NO_ANSWER)
        if PLUS_MINUS.search(answer.text):
            raise Wrong(f"hedged answer: a value with a plus-or-minus names two, {short(answer.text)}", HEDGED)
        found = numbers_in(answer.text, 2)
        if len(found) != 1:
            many = "more than one number" if found else "no number"
            raise Wrong(f"expected one number, found {many} in text {short(answer.text)}",
                        HEDGED if found else MALFORMED)
        to_number(answer.text, "value")  # "more than 52 sellers" names no value
        answer = f"{found[0].value!r}{'%' if found[0].percent else ''}"
    elif isinstance(answer, dict):
        fields = top_fields(answer)
        if "value" in fields:
            _no_second_value(answer, question, tol)
            _ratio_agrees(fields, gold, fmt, tol)
            answer = fields["value"]
        elif len(answer) == 1:  # {"csat": 0.84}: one named number
            key, answer = next(iter(answer.items()))
            if offers_alternatives(key, answer):
                raise Wrong(f"hedged answer: {key!r} offers alternatives", HEDGED)
        else:
            raise Wrong("missing field 'value'")
    elif isinstance(answer, list):
        if len(answer) != 1:
            raise Wrong(f"expected one value, got an array of {len(answer)}", HEDGED if len(answer) > 1 else ROWS)
        return value(answer[0], gold, fmt, tol, question)
    check_number(answer, gold["value"], tol, "value", percent_scale(fmt))


_RATIO = ("numerator", "denominator")
RATIO_TOLERANCE = 0.01


def _no_second_value(answer: dict, question: str, tol: dict) -> None:
    for key, x in answer.items():
        name = field_name(key)
        if name == "value":
            continue
        if offers_alternatives(key, x):
            raise Wrong(f"hedged answer: {key!r} offers alternatives", HEDGED)
        if "value" in name and numeric(x):
            raise Wrong(f"hedged answer: a second value in {key!r}", HEDGED)
        if isinstance(x, dict | list):
            nested_claims(x, str(key), {"value"}, verdicts=False)
    try:
        same = to_number(top_fields(answer)["value"], "value").value
    except Wrong:
        same = None  # read again, with its reason, when it is compared
    no_second_number(answer, {"value", *_RATIO}, question, () if same is None else (same,),
                     0.0 if same is None else allowed_error(same, tol))



def _ratio_agrees(fields: dict, gold: dict, fmt: dict, tol: dict) -> None:
    """A restated numerator and denominator must give the gold value (a share, in either scale)."""
    given = [f for f in _RATIO if f in fields]
    if not given:
        return
    if len(given) == 1:
        raise Wrong(f"hedged answer: a second number in {given[0]!r} without the other half of the ratio", HEDGED)
    numerator, denominator = (to_number(fields[f], f).value for f in _RATIO)
    if numerator is None or not denominator:
        raise Wrong("contradictory answer: the numerator and denominator give no value", CONTRADICTED)
    try:  # the parts are often rounded: a percent of play, far below another scenario's difference
        check_number(numerator / denominator, gold["value"], {"rel_tol": RATIO_TOLERANCE, "abs_tol": 0.0},
                     "numerator / denominator", percent_scale(fmt))
    except Wrong as exc:
        raise Wrong(f"contradictory answer: {exc}", CONTRADICTED) from None


# ---- verdicts ------------------------------------------------------------------------------------------------

_PASS_FAIL = re.compile(r"\b(pass|fail)(?:es|ed|ing)?\b")
_DIRECTION_WORDS = frozenset(["increasing", "decreasing", "flat", "rising", "falling", "declining", "growing",
                              "stable", "upward", "downward"])
_NOT_SIGNIFICANT = re.compile(r"\b(?:not|non|in)[\s-]?(?:statistically\s+)?significant")


def _pass_fail_named(text: str) -> set[str]:
    return {m.group(1).upper() for m in _PASS_FAIL.finditer(fold(text) or "")}


def _directions_named(text: str) -> set[str]:
    return {DIRECTIONS[w] for w in re.findall(r"[a-z]+", fold(text) or "") if w in _DIRECTION_WORDS}


def _significance_named(text: str) -> set[str]:
    folded = fold(text) or ""
    named = {"false"} if _NOT_SIGNIFICANT.search(folded) else set()
    if "significant" in _NOT_SIGNIFICANT.sub(" ", folded):
        named.add("true")
    return named



def _word(x: Any, words: dict[str, str], what: str, expected: str) -> str:
    """A verdict or direction written as a word; two of them in one field are a hedge."""
    if isinstance(x, bool) and "true" in words:
        return words["true" if x else "false"]
    if isinstance(x, list) and len(x) > 1:
        raise Wrong(f"hedged answer: {what} is a list of {len(x)} where one is asked", HEDGED)
    if isinstance(x, list) and x:
        x = x[0]
    text = fold(x) if isinstance(x, str) else None
    if text in words:
        return words[text]
    plain = _plain_word(text, words)
    if plain is not None:
        return plain
    said = {words[w] for w in (text or "").replace("/", " ").replace(",", " ").split() if w in words}
    if len(said) > 1:
        raise Wrong(f"hedged answer: {what} names more than one, {short(x)}", HEDGED)
    raise Wrong(f"{what}: expected {expected}, got {short(x)}")


_MARKUP = re.compile(r"^[\s*_`'\"✓✔✗✘❌✅:.!-]+|[\s*_`'\".!]+$")
_INFLECTED = {"passed": "pass", "passes": "pass", "passing": "pass", "failed": "fail", "fails": "fail",
              "failing": "fail"}
_NOT_WORD = {"pass": "fail", "fail": "pass"}
_FILLER_WORDS = frozenset(["trend", "trending", "overall", "the", "a", "is", "it", "clearly", "slightly",
                           "strongly", "moderately", "steadily", "direction"])


def _plain_word(text: str | None, words: dict[str, str]) -> str | None:
    """A verdict or direction in a plain sentence of one claim: "**FAIL**", "FAILED.", "does not pass",
    "downward trend"; None when the text says anything else."""
    if not text:
        return None
    parts = _MARKUP.sub("", text).split()
    parts = [_INFLECTED.get(w, w) for w in parts if w not in _FILLER_WORDS]
    if len(parts) >= 2 and parts[-2] in ("not", "doesn't", "didn't") and parts[-1] in _NOT_WORD and \
            all(w in ("does", "did", "do", "not", "doesn't", "didn't") for w in parts[:-1]):
        parts = [_NOT_WORD[parts[-1]]]  # "does not pass" is FAIL
    return words.get(" ".join(parts)) if parts else None


def threshold(answer: Any, gold: dict, fmt: dict, tol: dict, question: str = "") -> None:
    """PASS or FAIL, with the value (and, optionally, the threshold and the margin restated)."""
    answer = require_dict(answer, "threshold")
    one_verdict(answer, ("result", "verdict"), ("value", "threshold"))
    restated = {f for f in top_fields(answer) if "threshold" in f and f not in MARGINS | SHORTFALLS | RELATIVE_MARGINS}
    no_second_number(answer, {"result", "verdict", "value", *restated, *MARGINS, *SHORTFALLS, *RELATIVE_MARGINS,
                              *_RATIO}, question)
    result = _word(field(answer, "result", "verdict"), VERDICTS, "result", "PASS or FAIL")
    no_other_verdict_in_text(answer, ("result", "verdict"), result, _pass_fail_named)
    if result != gold["result"]:
        raise Wrong(f"result {result}, the gold is {gold['result']}", VERDICT)
    scale = percent_scale(fmt)
    check_number(field(answer, "value"), gold["value"], tol, "value", scale)
    fields = top_fields(answer)
    for name in sorted(restated):  # optional; a restated threshold ("threshold_value" too) must be the asked one
        check_number(fields[name], gold["threshold"], tol, name, scale)
    margin(answer, gold["value"], gold["threshold"], scale == "fraction", tol)


def trend(answer: Any, gold: dict, fmt: dict, tol: dict, question: str = "") -> None:
    """The direction, the total change in percentage points and the peak month."""
    answer = require_dict(answer, "trend")
    one_verdict(answer, ("direction",), ("total_change_pct", "peak_period"))
    no_second_number(answer, {"direction", "totalchangepct", "peakperiod", *TREND_FACTS}, question)
    direction = _word(field(answer, "direction"), DIRECTIONS, "direction", "increasing, decreasing or flat")
    no_other_verdict_in_text(answer, ("direction",), direction, _directions_named)
    if direction != gold["direction"]:
        raise Wrong(f"direction {direction}, the gold is {gold['direction']}", VERDICT)
    check_number(field(answer, "total_change_pct"), gold["total_change_pct"], tol, "total_change_pct", "points")
    peak = field(answer, "peak_period")
    if parse_period(peak) != parse_period(gold["peak_period"]):
        raise Wrong(f"peak_period {short(peak)}, the gold is {gold['peak_period']}", VERDICT)


_PAIRED = ("group_a", "group_b", "value_a", "value_b")


def _one_value(x: Any) -> Any:
    """A group's value: itself, or the one field of an object ({"RS": {"value": 53}})."""
    if isinstance(x, dict) and len(x) == 1:
        return next(iter(x.values()))
    return x


def _two_groups(answer: dict, keys: Keys, gold: dict) -> tuple[list[tuple[Any, Any]], set[str]]:
    """The answer's (group, value) pairs in its order, and the fields that hold them: group_a/value_a and
    group_b/value_b, or the groups as keys ({"RS": 53, "PR": 55}, {"value_RS": 53, …}, {"RS": {"value": 53}},
    or one object of them: {"values": {…}})."""
    fields = top_fields(answer)
    if "groupa" in fields or "groupb" in fields or "valuea" in fields:
        return [(field(answer, f"group_{s}"), field(answer, f"value_{s}")) for s in ("a", "b")], \
            {field_name(f) for f in _PAIRED}
    group_named = group_namer(keys, [gold["group_a"], gold["group_b"]])
    for key, x in answer.items():
        if isinstance(x, dict) and len(x) == 2 and all(group_named(k) is not None for k in x):
            return [(group_named(k), v) for k, v in x.items()], {field_name(key)}
    pairs = [(k, _one_value(x)) for k, x in answer.items() if group_named(k) is not None]
    if len(pairs) == 2 and not any(isinstance(v, dict | list) for _, v in pairs):
        return [(group_named(k), v) for k, v in pairs], {field_name(k) for k, _ in pairs}
    raise Wrong("missing field 'group_a'")


def comparison(answer: Any, gold: dict, fmt: dict, tol: dict, question: str = "") -> None:
    """Two groups' values, aligned by group, and which is higher; a restated difference or ratio must follow
    from the two values."""
    answer = require_dict(answer, "comparison")
    keys = Keys([gold["group_a"], gold["group_b"]])
    named = {keys(gold["group_a"]), keys(gold["group_b"])}

    def names_group(x: Any) -> bool:
        return keys(x) in named

    one_verdict(answer, ("higher",), _PAIRED, names_group)
    pairs, held = _two_groups(answer, keys, gold)
    no_second_number(answer, {"higher", *held, *DIFFERENCES, *RATIOS, *RELATIVE}, question)
    given = {}
    for group, value_ in pairs:  # aligned by group: naming the two groups in the other order is fine
        if keys(group) in given:
            raise Wrong(f"group {show(group)} named twice")
        given[keys(group)] = value_
    gold_of, readings = {}, set()
    for side in ("a", "b"):
        group = gold[f"group_{side}"]
        if keys(group) not in given:
            raise Wrong(f"missing group {show(group)}", ROWS)
        check_number(given[keys(group)], gold[f"value_{side}"], tol, f"value of {show(group)}",
                     percent_scale(fmt), readings=readings)
        gold_of[keys(group)] = gold[f"value_{side}"]
    first, second = (gold_of[keys(group)] for group, _ in pairs)
    difference(answer, first, second, percent_scale(fmt) == "fraction", tol)
    higher = field(answer, "higher")
    if isinstance(higher, str) and field_name(higher) in ("groupa", "a", "groupb", "b"):
        higher = field(answer, f"group_{field_name(higher)[-1]}")  # "higher": "group_a" names its own group_a
    _no_other_higher_in_text(answer, higher, [gold["group_a"], gold["group_b"]], keys)
    if isinstance(higher, list) and len(higher) > 1:
        raise Wrong(f"hedged answer: 'higher' is a list of {len(higher)} where one group is asked", HEDGED)
    if isinstance(higher, str) and keys(higher) not in named and all(
            fold(show(g)) in (fold(higher) or "") for g in (gold["group_a"], gold["group_b"])):
        raise Wrong(f"hedged answer: 'higher' names both groups, {short(higher)}", HEDGED)
    if keys(higher) != keys(gold["higher"]):
        raise Wrong(f"higher {show(higher)}, the gold is {show(gold['higher'])}", VERDICT)


_HIGHER_WORDS = r"(?:is|was|were|would be|comes out|ranks)?\s*(?:higher|larger|greater|bigger|ahead|above|the winner)\b"


def _no_other_higher_in_text(answer: dict, higher: Any, groups: list[Any], keys: Keys) -> None:
    """Raise Wrong (hedged) when free text in the answer says the other group is higher: {"higher": "Prague",
    "note": "south Moravia is higher before the policy"}."""
    others = [g for g in groups if g is not None and keys(g) != keys(higher)]
    for key, x in answer.items():
        if field_name(key) in ("higher", "groupa", "groupb") or not isinstance(x, str):
            continue
        text = fold(x) or ""
        for g in others:
            if re.search(re.escape(fold(show(g)) or "") + r"\s+" + _HIGHER_WORDS, text):
                raise Wrong(f"hedged answer: {key!r} says {show(g)} is higher, {short(x)}", HEDGED)


def _boolean(x: Any, what: str) -> bool:
    words = {"true": "true", "yes": "true", "significant": "true", "false": "false", "no": "false",
             "not significant": "false", "insignificant": "false"}
    if isinstance(x, bool):
        return x
    return _word(x, words, what, "true or false") == "true"


def significance(answer: Any, gold: dict, fmt: dict, tol: dict, question: str = "") -> None:
    """The verdict at the task's alpha, and a p-value within 0.01 that agrees with it; restated groups, means,
    their difference and alpha must be the gold's (means aligned by group)."""
    answer = require_dict(answer, "significance")
    own = ("significant", "is_significant")
    asked = ("p_value", "test_name", "group_a", "group_b", "mean_a", "mean_b")
    one_verdict(answer, own, asked)
    by_group = _means_by_group(answer, gold, fmt, tol)
    no_second_number(answer, {*map(field_name, (*own, *asked, "p", "pvalue", "p_val", "alpha",
                                                "significance_level")), *TEST_STATISTICS, *DIFFERENCES, *by_group},
                     question)
    significant = _boolean(field(answer, *own), "significant")
    no_other_verdict_in_text(answer, (*own, "test_name"), json.dumps(significant), _significance_named)
    p = field(answer, "p_value", "p", "pvalue", "p_val")
    if significant != gold["significant"]:
        raise Wrong(f"significant {json.dumps(significant)}, the gold is {json.dumps(gold['significant'])}", VERDICT)
    check_number(p, gold["p_value"], {"abs_tol": P_VALUE_TOLERANCE}, "p_value", bounds=True)
    alpha = fmt.get("alpha")
    if alpha is not None:
        _agrees(p, significant, float(alpha))
    same_alpha(answer, alpha)
    _means(answer, gold, fmt, tol)


def _means_by_group(answer: dict, gold: dict, fmt: dict, tol: dict) -> set[str]:
    """Check the means an answer names after their groups ("mean_PR": 2.44, "SP": 2.86); the fields it read."""
    if "group_a" not in gold or "group_b" not in gold:
        return set()
    groups = [gold["group_a"], gold["group_b"]]
    keys = Keys(groups)
    group_named = group_namer(keys, groups)
    mean_of = {keys(gold["group_a"]): gold.get("mean_a"), keys(gold["group_b"]): gold.get("mean_b")}
    held = set()
    for key, x in answer.items():
        group = group_named(key)
        if group is None or isinstance(x, dict | list) or field_name(key) in ("groupa", "groupb"):
            continue
        held.add(field_name(key))
        if mean_of[keys(group)] is not None:
            try:
                check_number(x, mean_of[keys(group)], tol, str(key), percent_scale(fmt))
            except Wrong as exc:
                if exc.kind != VALUE:
                    raise
                raise Wrong(f"contradictory answer: {key!r} is not the mean of {show(group)} ({exc})",
                            CONTRADICTED) from None
    return held


def _means(answer: dict, gold: dict, fmt: dict, tol: dict) -> None:
    """Restated groups must be the compared ones, and restated means each its own group's (the answer's group_a
    or, when it names none, the gold's)."""
    if "group_a" not in gold or "group_b" not in gold:
        return
    keys = Keys([gold["group_a"], gold["group_b"]])
    fields = top_fields(answer)
    order = [gold["group_a"], gold["group_b"]]
    named = [fields.get(f"group{s}") for s in "ab"]
    for side, group in zip("ab", named, strict=True):
        if group is not None and keys(group) not in {keys(g) for g in order}:
            raise Wrong(f"group_{side} {short(group)} is not one of the compared groups, {show(order[0])} and "
                        f"{show(order[1])}", ROWS)
    if all(g is not None for g in named):
        if keys(named[0]) == keys(named[1]):
            raise Wrong(f"group {show(named[0])} named twice")
        if keys(named[0]) != keys(order[0]):
            order.reverse()  # the answer names the groups the other way round: its means follow its groups
    elif any(g is not None for g in named):
        side = "a" if named[0] is not None else "b"
        if keys(named["ab".index(side)]) != keys(gold[f"group_{side}"]):
            order.reverse()
    mean_of = {keys(gold["group_a"]): gold.get("mean_a"), keys(gold["group_b"]): gold.get("mean_b")}
    means = [mean_of[keys(g)] for g in order]
    scale = percent_scale(fmt)
    for side, mean in zip("ab", means, strict=True):
        if f"mean{side}" in fields and mean is not None:
            try:
                check_number(fields[f"mean{side}"], mean, tol, f"mean_{side}", scale)
            except Wrong as exc:
                if exc.kind != VALUE:
                    raise
                raise Wrong(f"contradictory answer: mean_{side} is not the mean of {show(order['ab'.index(side)])}"
                            f" ({exc})", CONTRADICTED) from None
    if None not in means:
        difference(answer, means[0], means[1], scale == "fraction", tol, relative=False)


_P_NAME = re.compile(r"^\s*(?:p(?:[\s_-]?value)?)?\s*")  # "p < 0.001", "p-value = 0.04"


def _agrees(p: Any, significant: bool, alpha: float) -> None:
    """Raise Wrong unless the verdict follows from the answer's own p-value (significant when p < alpha); a bound
    ("< 0.001") agrees when it decides the verdict or when it cannot."""
    number = to_number(p, "p_value", bounds=True).value
    if number is None:
        return
    text = _P_NAME.sub("", p) if isinstance(p, str) else ""
    if text.startswith(("<", "≤")):
        follows = True if number <= alpha else None
    elif text.startswith((">", "≥")):
        follows = False if number >= alpha else None
    else:
        follows = number < alpha
    if follows is not None and follows != significant:
        given = p if isinstance(p, str) else number_text(number)
        raise Wrong(f"contradictory answer: p_value {given} at alpha {alpha:g} means "
                    f"significant {json.dumps(follows)}, the answer says {json.dumps(significant)}", CONTRADICTED)


__all__ = ["Keys", "breakdown", "comparison", "ranking", "rows_of", "show", "significance",
           "threshold", "trend", "value"]
