"""Same seed, data and manifest -> byte-identical bundle files, and `generate --refresh` says what changed.

One regeneration serves both: it refreshes an edited copy of the session's bundle, so its files must
equal the session bundle's byte for byte (warehouse.duckdb aside: DuckDB's file format is not byte-stable,
so its tables are compared by content), and its diff must name exactly the edits.
"""

from __future__ import annotations

import json
import shutil

import duckdb
import pytest

from tests.conftest import run_cli


@pytest.fixture(scope="module")
def regenerated(demo_project, demo_bundle, tmp_path_factory):
    """An "earlier" bundle (one gold edited, one task removed, one task the project no longer makes)
    refreshed by a second `dptool generate` with the same seed."""
    root = tmp_path_factory.mktemp("refresh")
    old = root / "old"
    shutil.copytree(demo_bundle[0], old)
    tasks = [json.loads(line) for line in (old / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    sql = [t for t in tasks if t["analysis_type"] == "point_query"]
    edited, removed = sql[0], sql[1]
    edited["gold"] = {"value": -1.0}
    ghost = dict(sql[2], task_id="t_9999", slice={"window": {"label": "1999"}})
    tasks = [t for t in tasks if t is not removed] + [ghost]
    (old / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    new = root / "new"
    proc = run_cli("generate", "--project-dir", str(demo_project.project_dir), "--refresh", str(old), "--out", str(new),
                   "--quiet")
    assert proc.returncode == 0, proc.stderr
    return new, {"edited": edited["task_id"], "removed": removed["task_id"], "kept": len(tasks) - 2}


def _files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            # .dptool records each file's hash: those of refresh.* differ here by design
            if p.is_file() and p.name not in ("warehouse.duckdb", "refresh.json", "refresh.md", ".dptool")}


def _tables(path):
    con = duckdb.connect(str(path), read_only=True)
    names = [r[0] for r in con.execute(
        "select table_schema || '.' || table_name from information_schema.tables order by 1").fetchall()]
    return {n: con.execute(f"select * from {n} order by all").fetchall() for n in names}


def test_same_seed_gives_a_byte_identical_bundle(demo_bundle, regenerated):
    first, second = demo_bundle[0], regenerated[0]
    assert _files(first).keys() == _files(second).keys()
    again = _files(second)
    for name, content in _files(first).items():
        changed = [(a, b) for a, b in zip(content.splitlines(), again[name].splitlines(), strict=False) if a != b]
        assert content == again[name], (name, changed[:1])
    assert _tables(first / "warehouse.duckdb") == _tables(second / "warehouse.duckdb")


def test_refresh_names_the_changed_the_dropped_and_the_added(regenerated):
    new, edits = regenerated
    d = json.loads((new / "refresh.json").read_text(encoding="utf-8"))
    assert [r["old_id"] for r in d["changed"]] == [edits["edited"]]
    assert [r["new_id"] for r in d["added"]] == [edits["removed"]]
    # asked again where it can be: the ghost's window has no dates, so it cannot
    assert [(r["old_id"], r["why"]) for r in d["dropped"]] == [("t_9999", "cannot be asked")]
    assert len(d["unchanged"]) == edits["kept"]
    assert all(r["old_id"] == r["new_id"] for r in d["unchanged"] + d["changed"])  # ids name questions
    text = (new / "refresh.md").read_text(encoding="utf-8")
    assert "1 same question with a new gold, 1 dropped, 1 added" in text
    assert "Made as the old bundle was: target 60, min per type 10, seed 42." in text
