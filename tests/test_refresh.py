"""`dptool generate --refresh`: golds that changed, tasks dropped with the reason, tasks added."""

from __future__ import annotations

from dptool.generate.refresh import diff, key_of


def _task(task_id, gold, slice_=None, rules=("r",)):
    return {"task_id": task_id, "analysis_type": "point_query", "metric_ids": ["m"], "rule_ids": list(rules),
            "dimension": "state", "slice": slice_ or {"state": "SP"}, "gold": gold, "question": f"q {task_id}",
            "subgraph_id": "s"}


def test_diff_names_changed_dropped_and_added():
    old = [_task("t_0001", {"value": 1.0}), _task("t_0002", {"value": 2.0}, {"state": "RJ"}),
           _task("t_0003", {"value": 3.0}, {"state": "MG"})]
    new = [_task("t_0001", {"value": 1.5}), _task("t_0002", {"value": 2.0}, {"state": "RJ"}),
           _task("t_0004", {"value": 4.0}, {"state": "BA"})]
    d = diff(old, new, {key_of(old[2]): "the rule does not change the answer"})
    assert d["unchanged"] == 1
    assert [(r["old_id"], r["new_id"], r["new_gold"]) for r in d["changed"]] == [("t_0001", "t_0001", {"value": 1.5})]
    assert d["dropped"] == [
        {"old_id": "t_0003", "question": "q t_0003", "reason": "the rule does not change the answer"}]
    assert d["added"] == [{"new_id": "t_0004", "question": "q t_0004"}]
