"""Bad input: one clear line on stderr, exit code 1, no traceback, nothing written to the output folder."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

from dptool.outdir import BUNDLE, MARKER
from tests.conftest import run_cli


def _assert_one_line_error(proc, *fragments: str) -> None:
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


@pytest.fixture
def existing_bundle(tmp_path) -> Path:
    """An output folder from an earlier run: a failed run must leave it exactly as it was."""
    out = tmp_path / "bundle"
    out.mkdir()
    (out / MARKER).write_text(json.dumps({"kind": BUNDLE.name}) + "\n", encoding="utf-8")
    (out / "tasks.jsonl").write_text('{"task_id": "old"}\n', encoding="utf-8")
    return out


def _unchanged(out: Path) -> bool:
    return sorted(p.name for p in out.iterdir()) == [MARKER, "tasks.jsonl"] and \
        (out / "tasks.jsonl").read_text(encoding="utf-8") == '{"task_id": "old"}\n' and \
        not list(out.parent.glob(".bundle.tmp-*"))


def _project_with_manifest(tmp_path: Path, demo_project, edit) -> Path:
    """A project folder holding the demo's dbt_project.yml, its files (a manifest naming files that are gone is
    stale; the seeds linked, dptool writes nothing there) and an edited copy of its manifest."""
    root = tmp_path / "project"
    (root / "target").mkdir(parents=True)
    shutil.copy2(demo_project.project_dir / "dbt_project.yml", root / "dbt_project.yml")
    shutil.copy2(demo_project.project_dir / "profiles.yml", root / "profiles.yml")
    for folder in ("models", "macros", "tests"):
        shutil.copytree(demo_project.project_dir / folder, root / folder,
                        ignore=shutil.ignore_patterns("dptool_gold", "dptool_semantic", "dptool_ablation"))
    (root / "seeds").symlink_to(demo_project.project_dir / "seeds", target_is_directory=True)
    manifest = copy.deepcopy(json.loads(demo_project.manifest_path.read_text(encoding="utf-8")))
    edit(manifest)
    (root / "target" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return root


def _metric_meta(manifest: dict, name: str) -> list[dict]:
    node = manifest["nodes"][f"model.dptool_demo.{name}"]
    return [node["meta"]["dptool"]["metric"], node["config"]["meta"]["dptool"]["metric"]]


def _rule_meta(manifest: dict, name: str) -> dict:
    return manifest["macros"][f"macro.dptool_demo.rule__{name}"]["meta"]["dptool"]["rule"]


def test_outside_a_dbt_project(tmp_path, existing_bundle):
    proc = run_cli("generate", "--project-dir", str(tmp_path), "--out", str(existing_bundle))
    _assert_one_line_error(proc, "no dbt_project.yml", str(tmp_path))
    assert _unchanged(existing_bundle)


def test_without_a_manifest(tmp_path, existing_bundle, demo_project):
    root = tmp_path / "project"
    root.mkdir()
    shutil.copy2(demo_project.project_dir / "dbt_project.yml", root / "dbt_project.yml")
    proc = run_cli("generate", "--project-dir", str(root), "--out", str(existing_bundle))
    _assert_one_line_error(proc, "manifest.json", "dbt parse")
    assert _unchanged(existing_bundle)


def test_metric_without_value(tmp_path, existing_bundle, demo_project):
    def edit(manifest):
        for meta in _metric_meta(manifest, "gmv"):
            del meta["value"]

    root = _project_with_manifest(tmp_path, demo_project, edit)
    proc = run_cli("generate", "--project-dir", str(root), "--out", str(existing_bundle))
    _assert_one_line_error(proc, "models/ecommerce/metrics/_ecommerce__metrics.yml", "model.dptool_demo.gmv",
                           "meta.dptool.metric.value")
    assert _unchanged(existing_bundle)


def test_rule_naming_an_unknown_metric(tmp_path, existing_bundle, demo_project):
    def edit(manifest):
        _rule_meta(manifest, "outlier_exclusion")["modifies"] = ["avg_delivery_dayz"]

    root = _project_with_manifest(tmp_path, demo_project, edit)
    proc = run_cli("generate", "--project-dir", str(root), "--out", str(existing_bundle))
    _assert_one_line_error(proc, "macros/ecommerce/_ecommerce__rules.yml", "macro.dptool_demo.rule__outlier_exclusion",
                           "meta.dptool.rule.modifies", "avg_delivery_dayz")
    assert _unchanged(existing_bundle)


def test_manifest_that_is_not_json(tmp_path, existing_bundle, demo_project):
    root = _project_with_manifest(tmp_path, demo_project, lambda m: None)
    (root / "target" / "manifest.json").write_text("{not json", encoding="utf-8")
    proc = run_cli("generate", "--project-dir", str(root), "--out", str(existing_bundle))
    _assert_one_line_error(proc, "manifest.json", "not valid JSON")
    assert _unchanged(existing_bundle)


def test_help_names_every_command():
    proc = run_cli("--help")
    assert proc.returncode == 0
    for command in ("generate", "demo-data", "graph"):
        assert command in proc.stdout


def _set(meta: dict, **values) -> None:
    meta.update(values)


# issue 16: each of these crashed `dptool generate` with a traceback, or went on to fail 65 s later at export
BAD_DECLARATIONS = {
    "components_a_number": (
        lambda m: [_set(d, components=5) for d in _metric_meta(m, "seller_fulfillment_score")],
        ("models/ecommerce/metrics/_ecommerce__metrics.yml", "model.dptool_demo.seller_fulfillment_score",
         "meta.dptool.metric.components is 5")),
    "modifies_a_number": (
        lambda m: _set(_rule_meta(m, "outlier_exclusion"), modifies=5),
        ("macros/ecommerce/_ecommerce__rules.yml", "macro.dptool_demo.rule__outlier_exclusion",
         "meta.dptool.rule.modifies is 5")),
    "modifies_item_a_mapping": (
        lambda m: _set(_rule_meta(m, "outlier_exclusion"), modifies=[{"a": 1}]),
        ("macros/ecommerce/_ecommerce__rules.yml", "macro.dptool_demo.rule__outlier_exclusion",
         "meta.dptool.rule.modifies[0] is {a: 1}")),
    "dptool_is_text": (
        lambda m: [_set(meta, dptool="table") for node in [m["nodes"]["model.dptool_demo.orders"]]
                   for meta in (node["meta"], node["config"]["meta"])],
        ("models/ecommerce/staging/_ecommerce__tables.yml", "model.dptool_demo.orders", "meta.dptool is 'table'")),
    "node_a_string": (
        lambda m: _set(m["nodes"], **{"model.dptool_demo.orders": "orders"}),
        ("target/manifest.json", "nodes['model.dptool_demo.orders'] is 'orders'", "dbt parse")),
}


@pytest.mark.parametrize("case", list(BAD_DECLARATIONS))
def test_bad_declaration(tmp_path, existing_bundle, demo_project, case):
    edit, fragments = BAD_DECLARATIONS[case]
    root = _project_with_manifest(tmp_path, demo_project, edit)
    proc = run_cli("generate", "--project-dir", str(root), "--out", str(existing_bundle))
    _assert_one_line_error(proc, *fragments)
    assert _unchanged(existing_bundle)


@pytest.mark.parametrize("text", ["[]", "null"])
def test_manifest_that_is_no_mapping(tmp_path, existing_bundle, demo_project, text):
    root = _project_with_manifest(tmp_path, demo_project, lambda m: None)
    (root / "target" / "manifest.json").write_text(text, encoding="utf-8")
    proc = run_cli("generate", "--project-dir", str(root), "--out", str(existing_bundle))
    _assert_one_line_error(proc, "target/manifest.json: not a dbt manifest", f"it holds {text}", "dbt parse")
    assert _unchanged(existing_bundle)


def test_a_sql_error_names_its_gold_model_metric_and_rules(demo_project, demo_catalog):
    """A rule that does not compile, a metric whose SQL meets a missing column: each candidate's drop reason names
    the gold model, the metric and the rules in one line, and a metric none of whose candidates ran is a warning."""
    from dataclasses import replace

    from dptool.generate.instantiate import Candidate
    from dptool.generate.pipeline import _round, failing_sources
    from dptool.generate.sample import Skeleton

    skeleton = Skeleton("avg_delivery_days", "model.dptool_demo.orders.customer_state", "spatial",
                        ("outlier_exclusion",), ("model.dptool_demo.orders",))
    candidates = [
        Candidate(replace(skeleton, rules=("not_a_rule",)), "point_query", [], [], "value", None, task_id="t_0001"),
        Candidate(skeleton, "point_query", ["no_such_column = 1"], [], "value", None, task_id="t_0002"),
    ]
    done = _round(demo_project, candidates, demo_catalog, demo_project.connection(), "duckdb", progress=False)
    assert not done.tasks
    for c in candidates:
        reason = done.dropped[c.task_id]
        assert reason.startswith(f"SQL error in gold model {c.task_id} (metric avg_delivery_days, rules "
                                 f"{c.skeleton.rules[0]}): "), reason
        assert "\n" not in reason
    assert "no_such_column" in done.dropped["t_0002"]
    [line] = failing_sources(candidates, done.sql_errors)
    assert line.startswith("warning: metric avg_delivery_days: all 2 of its candidates failed; the first: "
                           "SQL error in gold model t_0001 (metric avg_delivery_days, rules not_a_rule): "), line
