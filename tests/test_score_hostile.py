"""Issue 23's hostile round, kept: hand-made answers to demo tasks of every format (tests/fixtures/
hostile_answers.json, the tasks copied in), half right in an odd form, half wrong in a way a scorer can miss.
Each records what it must score: "correct", a kind of wrong answer, "wrong" (any kind), or "gap: …", a known
limit of the scorer (an answer it passes though it is wrong), kept as a strict xfail."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dptool.answers import compare

ROUND = json.loads((Path(__file__).parent / "fixtures" / "hostile_answers.json").read_text(encoding="utf-8"))
CASES = ROUND["cases"]


def _id(i: int, case: dict) -> str:
    return f"{case['task']}-{i}-{case['expect'].split(':')[0].replace(' ', '-')}"


@pytest.mark.parametrize("case", [pytest.param(c, id=_id(i, c), marks=[pytest.mark.xfail(strict=True, reason=c[
    "expect"])] if c["expect"].startswith("gap") else []) for i, c in enumerate(CASES)])
def test_a_hostile_answer_scores_what_it_must(case):
    verdict = compare(ROUND["tasks"][case["task"]], case["answer"])
    expect = case["expect"]
    if expect == "correct":
        assert verdict.correct, verdict.reason
    else:
        assert not verdict.correct, "accepted"
        assert expect in ("wrong",) or expect.startswith("gap") or verdict.kind == expect, verdict.reason
        assert verdict.reason and "\n" not in verdict.reason


def test_the_round_is_half_right_and_half_wrong_over_every_format():
    formats = {ROUND["tasks"][c["task"]]["answer_format"]["type"] for c in CASES}
    assert formats == {"value", "threshold", "trend", "comparison", "significance", "ranking", "breakdown",
                       "knowledge"}
    right = sum(c["expect"] == "correct" for c in CASES)
    assert len(CASES) >= 150 and abs(right - (len(CASES) - right)) <= len(CASES) // 10
