"""`dptool generate --refresh`: each old task unchanged, with a new gold, dropped (and why) or added."""

from __future__ import annotations

from dptool.generate.ids import Ids, canonical, task_key
from dptool.generate.refresh import NOT_SAMPLED, diff, markdown, settings_line


def _task(task_id, gold, state="SP", rules=("r",), metric="m", scope="all"):
    return {"task_id": task_id, "domain": "shop", "analysis_type": "point_query", "metric_ids": [metric],
            "rule_ids": list(rules), "rules_in_force": list(rules), "rule_scope": scope, "dimension": "state",
            "slice": {"state": state}, "gold": gold, "question": f"q {state}", "subgraph_id": "s"}


def test_tasks_are_matched_by_what_they_ask_not_by_id():
    # an old bundle's positional ids: the same question under another id is matched, and reported under both
    old = [_task("t_0001", {"value": 1.0}), _task("t_0002", {"value": 2.0}, "RJ"),
           _task("t_0003", {"value": 3.0}, "MG")]
    new = [_task("pq_aaaa", {"value": 1.5}), _task("pq_bbbb", {"value": 2.0}, "RJ"),
           _task("pq_cccc", {"value": 4}, "BA")]
    d = diff(old, new, metrics={"m"}, rules={"r"}, made={}, reasons={})
    assert d["unchanged"] == [{"old_id": "t_0002", "new_id": "pq_bbbb"}]
    assert [(r["old_id"], r["new_id"], r["old_gold"], r["new_gold"]) for r in d["changed"]] == [
        ("t_0001", "pq_aaaa", {"value": 1.0}, {"value": 1.5})]
    assert [(r["old_id"], r["why"]) for r in d["dropped"]] == [("t_0003", NOT_SAMPLED)]
    assert d["added"] == [{"new_id": "pq_cccc", "question": "q BA"}]
    assert "1 unchanged, 1 same question with a new gold, 1 dropped, 1 added" in markdown(d, "old")


def test_a_dropped_task_says_why():
    ids = Ids()
    old = [_task("a", {"value": 1}, "SP", metric="gone"),
           _task("b", {"value": 1}, "RJ", rules=("r", "x"), scope="subset"),
           _task("c", {"value": 1}, "MG"), _task("d", {"value": 1}, "BA"), _task("e", {"value": 1}, "DF"),
           _task("f", {"value": 1}, "PR")]
    made = {canonical(task_key(t)): ids(task_key(t)) for t in old[2:5]}  # the run made candidates for c, d, e
    reasons = {made[canonical(task_key(old[2]))]: "the rule does not change the answer",
               made[canonical(task_key(old[3]))]: "not scorable: the value is NULL",
               made[canonical(task_key(old[4]))]: "stage-1 check: identifier_leakage"}
    d = diff(old, [], metrics={"m"}, rules={"r"}, made=made, reasons=reasons)
    assert [(r["old_id"], r["why"]) for r in d["dropped"]] == [
        ("a", "metric gone"), ("b", "rule gone"), ("c", "rules change nothing"), ("d", "no data"),
        ("e", "rejected by validation"), ("f", "not sampled")]
    assert d["dropped"][1]["reason"] == "the project no longer declares rule x"
    # a question that applies every governing rule names none: a rule gone is no reason to drop it
    assert diff([_task("g", {"value": 1}, rules=("x",))], [], metrics={"m"}, rules=set(), made={},
                reasons={})["dropped"][0]["why"] == "not sampled"
    assert d["dropped_by_why"] == {"metric gone": 1, "no data": 1, "not sampled": 1, "rejected by validation": 1,
                                   "rule gone": 1, "rules change nothing": 1}


def test_settings_line_names_what_changed():
    new = {"target": 600, "seed": 42, "llm": None}
    assert settings_line({"old": {"target": 1800, "seed": 42, "llm": None}, "new": new}) == (
        "Made with target 600, seed 42; changed since the old bundle: target 1800 -> 600.")
    assert settings_line({"old": dict(new), "new": new}) == "Made as the old bundle was: target 600, seed 42."
    assert "records no settings" in settings_line({"old": None, "new": new})
