"""The banking domain on Berka's real tables: the user's path does not break (issue 12).

Needs the public Berka files (account.asc ... and the 100-row trans sample, three weeks of January 1993) in
../shared/data/berka/raw_asc beside the repository (or beside its worktree folder); a clone without them skips.
The demo project is copied without its e-commerce domain, the real tables are swapped in with
`dptool demo-data --from`, then `dbt build` and a small `dptool generate` run.
"""

from __future__ import annotations

import json
import shutil

import pytest

from dptool.project.dbt import DbtProject
from tests.conftest import REPO, copy_demo_project, run_cli

BERKA = next((p for p in (REPO.parent / "shared" / "data" / "berka" / "raw_asc",
                          REPO.parent.parent / "shared" / "data" / "berka" / "raw_asc") if p.is_dir()), None)
pytestmark = pytest.mark.skipif(BERKA is None, reason="Berka's real files are not beside the repository")


@pytest.fixture(scope="module")
def berka(tmp_path_factory):
    root = copy_demo_project(tmp_path_factory.mktemp("berka") / "project")
    for part in ("models/ecommerce", "macros/ecommerce", "seeds/ecommerce"):
        shutil.rmtree(root / part)
    proc = run_cli("demo-data", "--domain", "banking", "--from", str(BERKA), "--out", str(root / "seeds" / "banking"))
    assert proc.returncode == 0, proc.stderr
    project = DbtProject(root)
    project.run("deps")
    results = project.run("build", "--exclude", "tag:dptool_gold")
    out = root / "bundle"
    proc = run_cli("generate", "--project-dir", str(root), "--out", str(out), "--target", "12", "--min-per-type", "0")
    return project, results, proc, out


def test_the_build_warns_where_a_rule_finds_nothing_and_fails_nowhere(berka):
    _, results, _, _ = berka
    statuses = {r.unique_id: r.status for r in results}
    assert [uid for uid, status in statuses.items() if status not in ("success", "pass", "warn")] == []
    warned = sorted(uid.split(".")[2] for uid, status in statuses.items() if status == "warn")
    assert warned and all(name.startswith("dptool_rule_changes_answer_") for name in warned), warned


def test_generate_writes_a_bundle_and_no_question_reads_a_period_without_transactions(berka):
    _, _, proc, out = berka
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "rule links change nothing on this data" in proc.stdout
    tasks = [json.loads(line) for line in (out / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    on_trans = [t for t in tasks if t["gold_sql"] and '"trans"' in t["gold_sql"]]
    # the sample covers three weeks: no quarter, half or year lies inside them
    assert all("window" not in t["slice"] for t in on_trans), [t["question"] for t in on_trans][:3]
    assert not [t for t in on_trans if "1993" in t["question"]]
    card = (out / "card.md").read_text(encoding="utf-8")
    assert "leaves Transaction Count (`transaction_count`) unchanged" in card
