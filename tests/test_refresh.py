"""`dptool generate --refresh`: golds that changed, tasks dropped with the reason, tasks added."""

from __future__ import annotations

import json
import shutil

from dptool.refresh import diff, key_of
from tests.conftest import run_cli


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


def test_refresh_of_a_bundle_on_the_demo(demo_project, demo_bundle, tmp_path):
    # an "earlier" bundle: one gold edited, one task removed, one task that the project no longer makes
    old = tmp_path / "old"
    shutil.copytree(demo_bundle[0], old)
    tasks = [json.loads(line) for line in (old / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    sql = [t for t in tasks if t["analysis_type"] == "point_query"]
    sql[0]["gold"] = {"value": -1.0}
    removed = sql[1]
    ghost = dict(sql[2], task_id="t_9999", slice={"window": {"label": "1999"}})
    tasks = [t for t in tasks if t is not removed] + [ghost]
    (old / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")

    out = tmp_path / "new"
    proc = run_cli("generate", "--project-dir", str(demo_project.project_dir), "--refresh", str(old), "--out", str(out),
                   "--quiet")
    assert proc.returncode == 0, proc.stderr
    d = json.loads((out / "refresh.json").read_text(encoding="utf-8"))
    assert [r["old_id"] for r in d["changed"]] == [sql[0]["task_id"]]
    assert [r["new_id"] for r in d["added"]] == [removed["task_id"]]
    assert [(r["old_id"], r["reason"]) for r in d["dropped"]] == [
        ("t_9999", "no longer selected (metrics, rules or data changed the sample)")]
    assert d["unchanged"] == len(tasks) - 2
    assert "1 with a new gold, 1 dropped, 1 added" in (out / "refresh.md").read_text(encoding="utf-8")
