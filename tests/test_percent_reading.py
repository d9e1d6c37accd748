"""A share has one reading: the question asks it in percent, the kb's unit line says so and that the warehouse
holds it as a fraction of 1, and the scorer reads "38.37 %", "38.37" and the fraction 0.3837 alike, but never
one answer's bare numbers on two scales."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from dptool.answers import compare
from dptool.generate.export import unit_text
from dptool.generate.phrase import answer_hint

TOL = {"rel_tol": 0.001, "abs_tol": 0.0005}


def task(kind: str, gold, **fmt) -> dict:
    return {"task_id": "t", "question": "q", "answer_format": {"type": kind, "format": "percent", **fmt},
            "gold": gold, "tolerance": TOL}


SHARE = task("value", {"value": 0.3837})
RATE = task("value", {"value": 0.0096})  # a share under 1 %: both readings of a bare number are small
BREAKDOWN = task("breakdown", [{"k": "a", "value": 0.0096}, {"k": "b", "value": 0.45}], key="k")
RANKING = task("ranking", [{"k": "b", "value": 0.45}, {"k": "a", "value": 0.0096}], key="k", k=2)
COMPARISON = task("comparison", {"group_a": "a", "group_b": "b", "value_a": 0.0096, "value_b": 0.45,
                                 "higher": "b"}, key="k")


def right(t: dict, answer) -> bool:
    return compare(t, answer).correct


def test_the_question_and_the_kb_say_percent_and_the_kb_says_how_it_is_stored():
    assert answer_hint("percent", "share of orders") == "Give the answer as a percentage."
    line = unit_text(SimpleNamespace(unit="share of orders", format="percent"))
    assert line == ("share of orders (percent): answers give it in percent; the warehouse holds it as a fraction "
                    "of 1 (0.25 is 25 %)")
    assert unit_text(SimpleNamespace(unit="", format="percent")).startswith("a percentage: answers give it in percent")
    assert unit_text(SimpleNamespace(unit="CZK", format="currency")) == "CZK (currency)"


@pytest.mark.parametrize("answer", ["38.37 %", "38.37%", "38.37 percent", 38.37, "38.37", 0.3837, "0.3837",
                                    {"value": "38.37 %"}, {"value": 0.3837}])
def test_a_share_in_percent_or_as_a_fraction_is_right(answer):
    assert right(SHARE, answer)


@pytest.mark.parametrize("answer", ["0.3837 %", 3837, "0.38 %", 0.0038, "38.37 ‰"])
def test_a_share_on_a_wrong_scale_is_wrong(answer):
    assert not right(SHARE, answer)


def test_a_share_under_one_percent():
    assert all(right(RATE, a) for a in ("0.96 %", 0.96, "0.96", 0.0096))
    assert not any(right(RATE, a) for a in ("0.0096 %", "96 %", 96))


@pytest.mark.parametrize("t", [BREAKDOWN, RANKING, COMPARISON], ids=["breakdown", "ranking", "comparison"])
def test_one_answer_one_scale(t):
    if t is COMPARISON:
        def answer(a, b):
            return {"group_a": "a", "group_b": "b", "value_a": a, "value_b": b, "higher": "b"}
    elif t is RANKING:
        def answer(a, b):
            return [{"k": "b", "value": b}, {"k": "a", "value": a}]
    else:
        def answer(a, b):
            return {"a": a, "b": b}
    assert right(t, answer(0.96, 45))  # both in percent
    assert right(t, answer(0.0096, 0.45))  # both fractions
    assert right(t, answer("0.96 %", 0.45))  # the "%" says its own scale
    verdict = compare(t, answer(0.96, 0.45))  # 0.96 % beside 45 %: each right on its own scale, not together
    assert not verdict.correct and "one answer, one scale" in verdict.reason, verdict.reason
