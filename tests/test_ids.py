"""Task ids name what a task asks (dptool.generate.ids): same question, same id; two questions, two ids."""

from __future__ import annotations

import itertools

import pytest

from dptool.generate.ids import PREFIX, Ids, canonical, question_key


def key(**changes):
    base = dict(domain="shop", analysis_type="ranking", metric="aov", scope="all", dimension="state",
                slice_={"window": {"start": "2017-01-01", "end": "2018-01-01", "label": "2017"}}, k=5, min_rows=30)
    return question_key(**{**base, **changes})


def test_an_id_is_its_type_and_a_hash_of_the_question():
    task_id = Ids()(key())
    assert task_id.startswith("rk_") and len(task_id) == 3 + 8
    # the same question in another run, after other questions, gets the same id
    other = Ids()
    other(key(metric="gmv"))
    other(key(k=3))
    assert other(key()) == task_id
    assert set(PREFIX.values()) == {"pq", "tr", "cmp", "rk", "sig", "thr", "cf", "dec", "kn"}


@pytest.mark.parametrize("change", [
    {"domain": "bank"}, {"analysis_type": "point_query"}, {"metric": "gmv"}, {"scope": "none"},
    {"scope": "subset", "rules": ["a"]}, {"dimension": "city"}, {"k": 3}, {"min_rows": 10},
    {"slice_": {"window": {"start": "2017-01-01", "end": "2017-07-01", "label": "the first half of 2017"}}},
    {"withdrawn": "a"}])
def test_each_part_of_the_question_is_part_of_the_id(change):
    assert Ids()(key(**change)) != Ids()(key())


def test_what_the_question_does_not_state_is_not_part_of_the_id():
    # "every governing rule" names none: adding a rule to the metric keeps the question, and its id
    assert key(rules=["a"]) == key(rules=["a", "b"]) == key()
    # a subset is named in the question, in any order
    assert key(scope="subset", rules=["b", "a"]) == key(scope="subset", rules=["a", "b"])
    assert canonical(key(scope="subset", rules=["a"])) != canonical(key(scope="subset", rules=["b"]))


def test_collisions_are_detected_and_resolved_by_a_longer_id():
    ids = Ids(width=1)  # one hex digit: 16 ids, so 200 keys collide many times
    keys = [key(k=k, min_rows=m) for k, m in itertools.product(range(20), range(10))]
    given = [ids(k) for k in keys]
    assert len(set(given)) == len(keys)
    assert ids.collisions > 0
    assert [ids(k) for k in keys] == given  # asked again, each key keeps its id
    again = Ids(width=1)
    assert [again(k) for k in keys] == given  # and so does every run that sees them in the same order
