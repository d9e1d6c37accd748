"""Bad input: one clear line on stderr, exit code 1, no traceback, nothing written to the output folder."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

from dptool.errors import DptoolError
from dptool.outdir import BUNDLE, MARKER
from dptool.project.catalog import load_catalog
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


# ---- issue 23: limits, rule new, a dimension on a missing column, what score.md shows -------------------------------

@pytest.mark.parametrize(("args", "option", "shown"), [
    (("--sql-timeout", "nan"), "--sql-timeout", "'nan' is not a finite number"),
    (("--sql-timeout", "inf"), "--sql-timeout", "inf is not in the range"),
    (("--sql-timeout", "1e10"), "--sql-timeout", "10000000000.0 is not in the range"),
    (("--llm-timeout", "nan"), "--llm-timeout", "'nan' is not a finite number"),
    (("--sql-memory", str(10**12)), "--sql-memory", "is not in the range"),
    (("--max-rows", str(10**9)), "--max-rows", "is not in the range"),
], ids=["timeout-nan", "timeout-inf", "timeout-1e10", "llm-timeout-nan", "memory-huge", "rows-huge"])
def test_a_limit_that_is_no_limit_is_refused_in_one_line(tmp_path, args, option, shown):
    proc = run_cli("eval", str(tmp_path), "--model", "ollama:x", *args, "--out", str(tmp_path / "run"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith(f"error: Invalid value for '{option}': ") and shown in proc.stderr, proc.stderr
    assert proc.stderr.rstrip().endswith(" eval --help`)")
    assert not (tmp_path / "run").exists()


def test_demo_data_refuses_a_scale_of_nan(tmp_path):
    proc = run_cli("demo-data", "--scale", "nan", "--out", str(tmp_path / "s"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "'nan' is not a finite number" in proc.stderr


def test_rule_new_refuses_an_id_the_project_has(tmp_path):
    """The rule's macro is in another file than the one rule new writes: dbt's next parse would fail on two macros."""
    from tests.subscriptions import copy_fixture

    root = copy_fixture(tmp_path / "project")
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    proc = run_cli("rule", "new", "early_cancellation", "--metric", "mrr", "--project-dir", str(root))
    _assert_one_line_error(proc, str(root / "macros" / "rules" / "rule__early_cancellation.sql"),
                           "already defines macro rule__early_cancellation")
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == before


def test_a_dimension_on_a_missing_column_names_its_yaml_node_and_column(demo_project, demo_manifest):
    from dptool.generate.profile import profile_dimensions
    from dptool.project.warehouse import Warehouse

    manifest = copy.deepcopy(demo_manifest)
    node = manifest["nodes"]["model.dptool_demo.orders"]
    node["columns"]["shipping_zone"] = {"name": "shipping_zone", "meta": {"dptool": {"dimension": "categorical"}}}
    catalog = load_catalog(manifest)
    with Warehouse.of(demo_project.connection()) as wh, pytest.raises(DptoolError) as info:
        profile_dimensions(catalog, wh)
    message = str(info.value)
    assert message.startswith(f"{node['patch_path'].split('://')[-1]}: model.dptool_demo.orders: "
                              "columns.shipping_zone.meta.dptool.dimension: orders has no column 'shipping_zone' "), \
        message
    assert ".duckdb" not in message and "\n" not in message


def test_score_md_shows_a_hostile_task_id_as_text(tmp_path):
    from tests.small_bundle import write_bundle

    bundle = write_bundle(tmp_path / "B")
    hostile = ["<img src=x onerror=alert(1)>", "a|b", "[x](javascript:alert(1))", "*bold* _it_ `code`", "two\nlines"]
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"task_id": t, "answer": 1}) + "\n" for t in hostile), encoding="utf-8")
    proc = run_cli("score", str(bundle), str(answers), "--out", str(tmp_path / "s"))
    assert proc.returncode == 0, proc.stderr
    md = (tmp_path / "s" / "score.md").read_text(encoding="utf-8")
    line = next(x for x in md.splitlines() if x.startswith("- answers for tasks not in the bundle: "))
    assert line == ("- answers for tasks not in the bundle: \\*bold\\* \\_it\\_ \\`code\\`, "
                    "\\<img src=x onerror=alert(1)\\>, \\[x\\](javascript:alert(1)), a\\|b, two lines")


@pytest.mark.parametrize(("args", "shown"), [
    (("--bogus",), "error: No such option '--bogus'. (see `dptool --help`)"),
    (("nosuch",), "error: No such command 'nosuch'. (see `dptool --help`)"),
    (("dp", "score"), "error: Missing argument 'PRED'. (see `dptool dp score --help`)"),
])
def test_a_usage_error_is_one_line_like_dptools_own(args, shown):
    """dptool's own options too (issue 28: `dptool --bogus` was click's three lines, Usage and Try first)."""
    proc = run_cli(*args)
    assert proc.returncode == 2
    assert proc.stderr == shown + "\n"


def test_a_group_alone_shows_its_help():
    proc = run_cli("dp")
    assert proc.returncode == 2 and proc.stderr.startswith("Usage: dptool dp [OPTIONS] COMMAND [ARGS]...\n")


# ---- held-out round four (issue 23's "done when"): every limit finite and in range ----------------------------------

EVAL = ("eval", "{B}", "--model", "ollama:x", "--ollama-host", "http://127.0.0.1:9", "--out", "{R}")
SERVE = ("serve", "{B}", "--out", "{R}")
LIMITS = {
    "sql-timeout-nan": (EVAL, "--sql-timeout", "nan"), "sql-timeout-minus-inf": (EVAL, "--sql-timeout", "-inf"),
    "sql-timeout-1e400": (EVAL, "--sql-timeout", "1e400"), "sql-timeout-hex": (EVAL, "--sql-timeout", "0x10"),
    "sql-timeout-tiny": (EVAL, "--sql-timeout", "1e-9"), "sql-memory-nan": (EVAL, "--sql-memory", "nan"),
    "sql-memory-huge": (EVAL, "--sql-memory", "99999999999"), "sql-memory-fraction": (EVAL, "--sql-memory", "1.5"),
    "max-rows-zero": (EVAL, "--max-rows", "0"), "max-rows-nan": (EVAL, "--max-rows", "nan"),
    "llm-timeout-nan": (EVAL, "--llm-timeout", "nan"), "llm-timeout-inf": (EVAL, "--llm-timeout", "inf"),
    "llm-timeout-negative": (EVAL, "--llm-timeout", "-5"), "eval-epochs-huge": (EVAL, "--epochs", "9" * 20),
    "serve-epochs-zero": (SERVE, "--epochs", "0"), "serve-sql-timeout-inf": (SERVE, "--sql-timeout", "inf"),
    "serve-port-huge": (SERVE, "--port", "99999999999"), "sample-nan": (SERVE, "--sample", "nan"),
    "seed-fraction": (SERVE, "--seed", "1.5"),
}


@pytest.mark.parametrize("case", list(LIMITS))
def test_round_four_a_limit_out_of_range_is_one_line_and_writes_nothing(tmp_path, case):
    from tests.small_bundle import write_bundle

    bundle = write_bundle(tmp_path / "B")
    command, option, value = LIMITS[case]
    run = tmp_path / "run"
    proc = run_cli(*(a.format(B=bundle, R=run) for a in command), option, value)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: Invalid value for '{option}'"), proc.stderr
    assert not run.exists()


def test_round_four_serve_refuses_epochs_that_would_fill_the_memory(tmp_path):
    """`serve --epochs 99999999999999999999`: the to-do list of epochs × tasks grew until the kernel killed the
    server (rc 137, no message); eval bounds --epochs to 100."""
    from tests.small_bundle import write_bundle

    bundle = write_bundle(tmp_path / "B")
    run = tmp_path / "run"
    proc = run_cli("serve", str(bundle), "--epochs", "9" * 20, "--out", str(run))
    _assert_one_line_error(proc, "epochs is 99999999999999999999: expected 1 to 100")
    # the CLI makes the (empty, marked) run folder before the run is set up: nothing of a run is in it
    assert not run.exists() or sorted(p.name for p in run.iterdir()) == [MARKER]


def test_a_generate_refused_before_any_work_says_only_why(tmp_path):
    (tmp_path / "dbt_project.yml").write_text("name: p\nprofile: p\n", encoding="utf-8")
    (tmp_path / "mydata").mkdir()
    (tmp_path / "mydata" / "notes.txt").write_text("mine", encoding="utf-8")
    proc = run_cli("generate", "--project-dir", str(tmp_path), "--out", str(tmp_path / "mydata"))
    assert proc.returncode == 1 and proc.stdout == "", proc.stdout  # no "[llm] none configured" before the refusal
    assert proc.stderr.startswith("error: ") and "not empty" in proc.stderr and proc.stderr.count("\n") == 1
