"""A knowledge answer keeps a key date's side: the rule that starts on 1 January 2017 is not the rule before it,
and an answer that offers the other side as an alternative in prose is hedged. A passage that speaks of both
sides of its date ("on or after …; before …") keeps both."""

from __future__ import annotations

import pytest

from dptool.answers import compare
from tests.test_score_knowledge import DELIVERY, RIGHT

TWO_SIDES = {"task_id": "k2", "question": "How is a cancellation counted?", "answer_format": {"type": "knowledge"},
             "tolerance": {"rel_tol": 0.0, "abs_tol": 0.0},
             "gold": {"passage": "Orders purchased on or after 1 January 2018 count as a cancellation if their status "
                                 "is canceled or unavailable. Orders purchased before 1 January 2018 count only when "
                                 "canceled.", "facts": ["2018-01-01"]}}
SINCE = {"task_id": "k3", "question": "What is the effective date of the policy?",
         "answer_format": {"type": "knowledge", "asks": "effective_date"},
         "tolerance": {"rel_tol": 0.0, "abs_tol": 0.0},
         "gold": {"passage": "| Effective date | 1 July 2016 |", "facts": ["2016-07-01"]}}


def kind(task: dict, answer) -> str:
    verdict = compare(task, answer)
    return "correct" if verdict.correct else verdict.kind


@pytest.mark.parametrize("answer", [
    RIGHT.replace("Effective 1 January 2017", "Before 1 January 2017"),
    RIGHT.replace("Effective 1 January 2017", "Prior to 2017-01-01"),
    RIGHT.replace("Effective 1 January 2017", "For orders purchased earlier than 1 January 2017"),
    RIGHT.replace("Effective 1 January 2017", "Up until 1 January 2017"),
    {"answer": RIGHT.replace("Effective 1 January 2017", "Before 1 January 2017")},
])
def test_the_other_side_of_the_date_is_contradictory(answer):
    assert kind(DELIVERY, answer) == "contradictory answer"


@pytest.mark.parametrize("answer", [
    RIGHT + " Or maybe before 1 January 2017.",
    RIGHT.replace("Effective 1 January 2017", "Effective 1 January 2017, or perhaps before 1 January 2017"),
    RIGHT + " It could be before 2017-01-01 instead.",
    RIGHT.replace("Effective 1 January 2017", "From 1 January 2017 or before 1 January 2017"),
])
def test_every_fact_and_the_other_side_offered_in_prose_is_hedged(answer):
    assert kind(DELIVERY, answer) == "hedged answer"


@pytest.mark.parametrize("answer", [
    RIGHT, RIGHT.replace("Effective 1 January 2017", "From 1 January 2017"),
    RIGHT.replace("Effective 1 January 2017", "Since 2017-01-01"),
    RIGHT.replace("Effective 1 January 2017", "For orders purchased on or after 1 January 2017"),
    RIGHT.replace("Effective 1 January 2017", "No earlier than 1 January 2017"),
    RIGHT + " Orders delivered before 1 January 2017 are not affected.",
])
def test_the_passages_side_stays_right(answer):
    assert kind(DELIVERY, answer) == "correct", compare(DELIVERY, answer).reason


@pytest.mark.parametrize("answer", [
    "From 1 January 2018 an order with status canceled or unavailable is a cancellation; before 1 January 2018 "
    "only canceled orders count.",
    "Orders purchased before 1 January 2018 count only when canceled; on or after 1 January 2018 canceled or "
    "unavailable orders count as a cancellation.",
])
def test_a_passage_with_both_sides_takes_both(answer):
    assert kind(TWO_SIDES, answer) == "correct", compare(TWO_SIDES, answer).reason


def test_a_date_task_takes_the_start_and_refuses_the_end():
    assert kind(SINCE, "The policy is effective from 2016-07-01.") == "correct"
    assert kind(SINCE, "1 July 2016") == "correct"
    assert kind(SINCE, "It applied before 1 July 2016.") == "contradictory answer"


def test_a_passage_that_says_before_of_a_date_it_does_not_start_the_rule_at_has_no_side():
    # "periods before 1 January 1997 were restated": the rule applies to every period
    restated = {**DELIVERY, "gold": {"passage": "The new weights apply to every reporting period, including periods "
                                                "before 1 January 1997, which were restated when version 2.0 was "
                                                "adopted.", "facts": ["1997-01-01"]}}
    for answer in ("The new weights apply to every reporting period; effective 1997-01-01, earlier periods were "
                   "restated.", "The new weights apply to every period, restated before 1 January 1997."):
        assert kind(restated, answer) == "correct", compare(restated, answer).reason
