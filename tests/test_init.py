"""`dptool init` and `dptool rule new` on copies of the subscriptions fixture project, from the command line."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from dptool import __version__
from dptool.project.catalog import load_catalog
from dptool.project.dbt import DbtProject
from dptool.project.scaffold import GOLD_BUILD, IGNORE_HEADER, package_dir, package_path
from tests.conftest import REPO
from tests.subscriptions import cli, copy_fixture


def package_line(root: Path) -> str:
    """The line init adds to packages.yml: the package's path relative to the project."""
    return f'- local: "{package_path(root)}"  # the dptool dbt package {__version__}, inside the installed dptool\n'


EXAMPLES = ("models/dptool_examples.yml", "macros/dptool_example_rule.sql", "macros/dptool_example_rule.yml",
            "models/dptool_example_rule.md")


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def project(tmp_path) -> Path:
    root = copy_fixture(tmp_path / "project")
    (root / ".gitignore").write_text("target/\ndbt_packages/\n", encoding="utf-8")
    return root


def test_init_sets_up_a_project(project):
    proc = cli("init", "--project-dir", str(project))
    assert proc.returncode == 0, proc.stderr
    assert (project / "packages.yml").read_text(encoding="utf-8") == "packages:\n  " + package_line(project)
    assert (project / ".gitignore").read_text(encoding="utf-8") == (
        "target/\ndbt_packages/\n" + IGNORE_HEADER + "/bundle/\n/answers.jsonl\n/score/\n/runs/\n/compare/\n"
        "/dp_bench/\n/models/dptool_gold/\n/models/dptool_semantic/\n/models/dptool_batch/\n/models/dptool_ablation/\n")
    for rel in EXAMPLES:
        assert (project / rel).is_file(), rel
    assert (project / "selectors.yml").read_text(encoding="utf-8") == (REPO / "selectors.yml").read_text("utf-8")
    lines = proc.stdout.splitlines()
    assert lines[0] == f"dptool init in {project} (dbt project 'subscriptions')"
    assert lines[-5:] == ["next:", "  dbt deps", "  dbt build", "  dptool generate",
                          "  dbt build --selector dptool_gold --vars '{dptool_gold: true}' --threads 1    # the gold "
                          "models and their rule tests, when you want them"]
    assert any(line.split()[:2] == ["packages.yml", "created"] for line in lines)
    assert any(line.split()[:2] == ["models/dptool_gold/", "ok"] for line in lines)
    assert ("  models/dptool_gold/                ok            nothing to configure: gold models set their own "
            "config (table, tag and group dptool_gold, custom schema dptool_gold: with dbt's own "
            "generate_schema_name, <target schema>_dptool_gold)") in lines
    assert (f"  selectors.yml                      created       selector dptool_gold: `{GOLD_BUILD}` builds the gold "
            "models (no other dbt command does: they are disabled unless that var is true)") in lines


def test_init_twice_changes_nothing(project):
    assert cli("init", "--project-dir", str(project)).returncode == 0
    before = _files(project)
    proc = cli("init", "--project-dir", str(project))
    assert proc.returncode == 0
    assert _files(project) == before
    assert "already set up: nothing changed" in proc.stdout
    assert all(line.split()[1] in ("ok", "skip") for line in proc.stdout.splitlines()[1:8])


def test_dry_run_writes_nothing(project):
    before = _files(project)
    proc = cli("init", "--project-dir", str(project), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert _files(project) == before
    out = proc.stdout
    assert "would create" in out and "would add" in out
    assert "--- packages.yml (new text)\npackages:\n  " + package_line(project) in out + "\n"
    assert "--- .gitignore (lines added)\n" + IGNORE_HEADER + "/bundle/\n/answers.jsonl\n" in out
    assert "--- selectors.yml (new text)\n" + (REPO / "selectors.yml").read_text("utf-8") in out + "\n"
    assert out.rstrip().endswith("dry run: nothing was written")


def test_init_adds_to_the_users_files_and_rewrites_none(project):
    packages = ("# our packages\npackages:\n    - local: ../shared_macros   # the team's macros\n\n"
                "# keep the list sorted\n")
    (project / "packages.yml").write_text(packages, encoding="utf-8")
    (project / "models" / "dptool_examples.yml").write_text("# mine\n", encoding="utf-8")
    proc = cli("init", "--project-dir", str(project))
    assert proc.returncode == 0, proc.stderr
    text = (project / "packages.yml").read_text(encoding="utf-8")
    assert text == packages + "    " + package_line(project)
    assert yaml.safe_load(text)["packages"] == [{"local": "../shared_macros"}, {"local": package_path(project)}]
    assert (project / "models" / "dptool_examples.yml").read_text(encoding="utf-8") == "# mine\n"
    assert "models/dptool_examples.yml         skip          exists; left as it is" in proc.stdout


MINE = """\
# our selectors
selectors:
  - name: nightly
    definition: 'tag:nightly'
"""


def test_init_adds_its_selectors_to_a_selectors_yml_of_yours(project):
    (project / "selectors.yml").write_text(MINE, encoding="utf-8")
    proc = cli("init", "--project-dir", str(project))
    assert proc.returncode == 0, proc.stderr
    text = (project / "selectors.yml").read_text(encoding="utf-8")
    assert text == MINE + (REPO / "selectors.yml").read_text("utf-8").split("selectors:\n", 1)[1]
    names = [s["name"] for s in yaml.safe_load(text)["selectors"]]
    assert names == ["nightly", "dptool_gold"]
    again = cli("init", "--project-dir", str(project))
    assert (project / "selectors.yml").read_text(encoding="utf-8") == text
    assert "already set up: nothing changed" in again.stdout


def test_init_leaves_your_default_selector_alone(project):
    """The gold models are disabled unless asked for: a default selector of the user's needs no exclusion."""
    mine = MINE.replace("    definition: 'tag:nightly'", "    default: true\n    definition: 'tag:nightly'")
    (project / "selectors.yml").write_text(mine, encoding="utf-8")
    proc = cli("init", "--project-dir", str(project))
    assert proc.returncode == 0, proc.stderr
    text = (project / "selectors.yml").read_text(encoding="utf-8")
    assert [s["name"] for s in yaml.safe_load(text)["selectors"]] == ["nightly", "dptool_gold"]
    assert "default selector" not in proc.stdout
    dbt = DbtProject(project)
    dbt.run("deps")
    dbt.run("parse")  # dbt reads the selectors: they are valid


def test_git_diff_after_init_and_deps_holds_no_absolute_path(project):
    """packages.yml and the package-lock.yml `dbt deps` writes are tracked: they name the dptool package by a path
    relative to the project (issue 28: init wrote this machine's venv path into both)."""
    def git(*args: str) -> str:
        env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
               "GIT_COMMITTER_EMAIL": "t@t"}
        return subprocess.run(["git", *args], cwd=project, capture_output=True, text=True, check=True, env=env).stdout

    with (project / ".gitignore").open("a", encoding="utf-8") as ignore:
        ignore.write("logs/\n")  # dbt's log, as a dbt repo ignores it
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "the repo as its owners have it")
    assert cli("init", "--project-dir", str(project)).returncode == 0
    DbtProject(project).run("deps")
    assert (project / "dbt_packages" / "dptool" / "dbt_project.yml").is_file()  # dbt deps installed it from there
    git("add", "-A")
    diff = git("diff", "--cached")
    assert "+++ b/packages.yml" in diff and "+++ b/package-lock.yml" in diff
    absolute = [line for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")
                and re.search(r"(^|[\s\"':=])/[\w.-]+/", line)]
    assert absolute == []
    for machine in (str(project), str(Path.home())):
        assert machine not in diff
    lock = yaml.safe_load((project / "package-lock.yml").read_text(encoding="utf-8"))
    assert [p["local"] for p in lock["packages"]] == [package_path(project)]
    assert (project / package_path(project)).resolve() == package_dir()


def test_init_notes_a_generate_schema_name_of_yours(project):
    (project / "macros" / "schemas.sql").write_text(
        "{% macro generate_schema_name(custom_schema_name, node) -%}{{ target.schema }}{%- endmacro %}\n", "utf-8")
    proc = cli("init", "--project-dir", str(project), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert ("  macros/schemas.sql                 note          its generate_schema_name decides where gold models "
            "land (they ask for the custom schema dptool_gold); to keep them in schema dptool_gold, make this the "
            "macro's first line: {%- if custom_schema_name == 'dptool_gold' %}{{ return('dptool_gold') }}"
            "{% endif -%}") in proc.stdout.splitlines()


def test_init_repoints_a_stale_dptool_package(project, tmp_path):
    old = tmp_path / "old_venv" / "dbt_package"
    old.mkdir(parents=True)
    (old / "dbt_project.yml").write_text('name: dptool\nversion: "0.0.9"\n', encoding="utf-8")
    (project / "packages.yml").write_text(f"packages:\n  - local: {old}\n  - local: ../other\n", encoding="utf-8")
    proc = cli("init", "--project-dir", str(project))
    assert proc.returncode == 0, proc.stderr
    assert (project / "packages.yml").read_text(encoding="utf-8") == (
        f'packages:\n  - local: "{package_path(project)}"\n  - local: ../other\n')
    assert f"the dptool package: {old} (0.0.9) -> {package_path(project)} ({__version__})" in proc.stdout


def test_init_makes_the_absolute_path_an_earlier_init_wrote_relative(project):
    (project / "packages.yml").write_text(f"packages:\n  - local: {package_dir()}\n", encoding="utf-8")
    proc = cli("init", "--project-dir", str(project))
    assert proc.returncode == 0, proc.stderr
    text = (project / "packages.yml").read_text(encoding="utf-8")
    assert text == f'packages:\n  - local: "{package_path(project)}"\n'
    assert (f"the dptool package: {package_dir()} ({__version__}) -> {package_path(project)} ({__version__}) (a path "
            "relative to the project, not this machine's)") in proc.stdout


def test_init_warns_about_enforced_contracts(project):
    conf = (project / "dbt_project.yml").read_text(encoding="utf-8")
    conf = conf.replace("    marts:\n", "    +contract: {enforced: true}\n    marts:\n")
    (project / "dbt_project.yml").write_text(conf, encoding="utf-8")
    proc = cli("init", "--project-dir", str(project), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert ("models/dptool_gold/                note          your models enforce contracts, which gold and "
            "semantic-layer models cannot: under models: subscriptions: add dptool_gold: {+contract: {enforced: "
            "false}} and dptool_semantic: {+contract: {enforced: false}}") in proc.stdout


@pytest.mark.parametrize("case", ["no project", "model-paths", "packages inline"])
def test_init_errors_are_one_line(project, tmp_path, case):
    root = project
    if case == "no project":
        root = tmp_path / "empty"
        root.mkdir()
        expected = f"error: {root}: no dbt_project.yml here; run `dptool init` at the root of a dbt project"
    elif case == "model-paths":
        conf = (root / "dbt_project.yml").read_text(encoding="utf-8")
        (root / "dbt_project.yml").write_text(conf.replace('model-paths: ["models"]', 'model-paths: ["dbt/models"]'),
                                              encoding="utf-8")
        expected = (f"error: {root / 'dbt_project.yml'}: model-paths is ['dbt/models']; dptool writes its models "
                    "under models/dptool_gold/ and models/dptool_semantic/, so add \"models\" to model-paths")
    else:
        (root / "packages.yml").write_text("packages: []\n", encoding="utf-8")
        expected = (f"error: {root / 'packages.yml'}: cannot add a line safely; add `- local: {package_path(root)}` "
                    "to its packages yourself")
    before = _files(root)
    proc = cli("init", "--project-dir", str(root))
    assert proc.returncode == 1
    assert proc.stderr.strip().startswith(expected), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert _files(root) == before


def test_scaffolds_parse_and_rule_new_declares_a_rule(project):
    """After init and `rule new`, dbt parses the project cleanly and the catalog has the new rule."""
    assert cli("init", "--project-dir", str(project)).returncode == 0
    proc = cli("rule", "new", "discount_cap", "--metric", "discount_rate", "--type", "override",
               "--title", "Discount Cap", "--project-dir", str(project))
    assert proc.returncode == 0, proc.stderr
    assert "(metric 'discount_rate' not checked: no target/manifest.json yet)" in proc.stdout
    macro = project / "macros" / "dptool_rules" / "rule__discount_cap.sql"
    props = yaml.safe_load((project / "macros" / "dptool_rules" / "rule__discount_cap.yml").read_text("utf-8"))
    assert props["macros"][0]["meta"]["dptool"]["rule"] == {"title": "Discount Cap", "type": "override",
                                                            "modifies": ["discount_rate"]}
    assert props["macros"][0]["description"] == '{{ doc("rule__discount_cap") }}'
    assert (project / "macros" / "dptool_rules" / "rule__discount_cap.md").read_text("utf-8").startswith(
        "{% docs rule__discount_cap %}\n# Discount Cap\n")

    dbt = DbtProject(project)
    dbt.run("deps")
    dbt.run("parse")
    log = (project / "logs" / "dbt.log").read_text(encoding="utf-8")
    assert "Deprecat" not in log.split("Running with dbt")[-1]
    manifest = json.loads(dbt.manifest_path.read_text(encoding="utf-8"))
    assert "macro.subscriptions.rule__dptool_example" in manifest["macros"]  # the example: a macro, not a rule
    docs = {d["name"] for d in manifest["docs"].values()}
    assert {"rule__discount_cap", "rule__dptool_example"} <= docs
    catalog = load_catalog(manifest, rule_documents={"zero_dollar_invoices": "x " * 25,
                                                     "early_cancellation": "y " * 25})
    rule = catalog.rules["discount_cap"]
    assert rule.modifies == ("discount_rate",) and rule.type == "override" and rule.document.startswith("# Discount")
    assert "dptool_example" not in catalog.rules

    # with a manifest, the metric is checked; and nothing is ever overwritten
    proc = cli("rule", "new", "other", "--metric", "mrr", "--project-dir", str(project))
    assert proc.returncode == 1 and proc.stderr.startswith("error: --metric 'mrr' is not a metric of this project; "
                                                           "its metrics: average_invoice_value, billings,")
    before = macro.read_text("utf-8")
    proc = cli("rule", "new", "discount_cap", "--metric", "discount_rate", "--project-dir", str(project))
    assert proc.returncode == 1
    assert proc.stderr.strip() == (f"error: {macro}: exists; dptool rule new never overwrites a file (choose "
                                   "another id)")
    assert macro.read_text("utf-8") == before


def test_rule_new_with_a_rules_dir(project):
    proc = cli("rule", "new", "rule__refund_window", "--metric", "refund_rate", "--rules-dir", "business_rules",
               "--project-dir", str(project))
    assert proc.returncode == 0, proc.stderr
    props = (project / "macros" / "dptool_rules" / "rule__refund_window.yml").read_text("utf-8")
    assert "description" not in props  # the document is the markdown file
    doc = (project / "business_rules" / "refund_window.md").read_text("utf-8")
    assert doc.startswith("# Refund window\n\nTODO: write the rule")
    assert not (project / "macros" / "dptool_rules" / "rule__refund_window.md").exists()
    dry = cli("rule", "new", "second", "--metric", "refund_rate", "--project-dir", str(project), "--dry-run")
    assert dry.returncode == 0 and "would create" in dry.stdout
    assert not (project / "macros" / "dptool_rules" / "rule__second.sql").exists()
    bad = cli("rule", "new", "Bad-Id", "--metric", "refund_rate", "--project-dir", str(project))
    assert bad.returncode == 1
    assert bad.stderr.strip() == ("error: 'Bad-Id': a rule id is lower-case letters, digits and underscores, "
                                  "from a letter")


def test_rule_new_of_several_metrics_names_a_renamed_semantic_metric(project):
    """A model named like a semantic metric: dptool declares the metric as <name>_metric, and `rule new` says so."""
    assert cli("init", "--project-dir", str(project)).returncode == 0
    (project / "models" / "marts" / "trials.sql").write_text("select * from {{ ref('fct_trials') }}\n", "utf-8")
    dbt = DbtProject(project)
    dbt.run("deps")
    dbt.run("parse")
    proc = cli("rule", "new", "trial_abuse", "--metric", "trials", "--metric", "refund_rate", "--type",
               "exclusionary", "--project-dir", str(project))
    assert proc.returncode == 0, proc.stderr
    assert ("  --metric trials: 'trials' is the semantic metric 'trials', declared as 'trials_metric' (a model is "
            "named 'trials'); the rule modifies trials_metric") in proc.stdout.splitlines()
    props = yaml.safe_load((project / "macros" / "dptool_rules" / "rule__trial_abuse.yml").read_text("utf-8"))
    assert props["macros"][0]["meta"]["dptool"]["rule"]["modifies"] == ["trials_metric", "refund_rate"]
    assert "It modifies trials_metric, refund_rate: `metric` is the one being computed." in \
        (project / "macros" / "dptool_rules" / "rule__trial_abuse.sql").read_text("utf-8")
    dbt.run("parse")
    catalog = load_catalog(dbt.load_manifest(), rule_documents={"zero_dollar_invoices": "x " * 25,
                                                                "early_cancellation": "y " * 25})
    assert catalog.rules["trial_abuse"].modifies == ("trials_metric", "refund_rate")

    skipped = cli("rule", "new", "mtd_cap", "--metric", "revenue_mtd", "--project-dir", str(project))
    assert skipped.returncode == 1
    assert skipped.stderr.startswith("error: --metric 'revenue_mtd' is a semantic metric dptool skips (cumulative "
                                     "metric (month-to-date): its value on a day aggregates the rows from the start "
                                     "of that day's month to that day")
    assert "); a rule can modify only a metric of the catalog: average_invoice_value," in skipped.stderr
    assert not (project / "macros" / "dptool_rules" / "rule__mtd_cap.sql").exists()


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)


def test_init_in_a_subfolder_of_a_git_repo_ignores_what_dptool_writes_at_the_git_root(tmp_path):
    """The git root is a parent folder and has no .gitignore: init creates it, with the project's paths, and a
    bundle, a score or a gold model is ignored there (git's own check-ignore says so)."""
    repo = tmp_path / "repo"
    root = copy_fixture(repo / "analytics" / "subscriptions")
    assert _git(repo, "init", "-q").returncode == 0
    proc = cli("init", "--project-dir", str(root))
    assert proc.returncode == 0, proc.stderr
    assert not (root / ".gitignore").exists()
    text = (repo / ".gitignore").read_text(encoding="utf-8")
    assert text.startswith(IGNORE_HEADER) and "/analytics/subscriptions/bundle/\n" in text
    line = next(line for line in proc.stdout.splitlines() if line.split()[:1] == ["../../.gitignore"])
    assert line.split()[1] == "created" and "bundle/, answers.jsonl, score/" in line and str(repo) in line
    written = ["bundle/warehouse.duckdb", "bundle/tasks.jsonl", "answers.jsonl", "score/report.md",
               "runs/serve-1/answers.jsonl", "compare/compare.md", "models/dptool_gold/t_0001.sql",
               "models/dptool_semantic/mrr.sql"]
    for rel in written:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x", encoding="utf-8")
    checked = _git(root, "check-ignore", *written)
    assert checked.stdout.split() == written
    assert _git(root, "check-ignore", "models/mrr.sql", "seeds/plans.csv").returncode == 1  # the project's own
    again = cli("init", "--project-dir", str(root))
    assert (repo / ".gitignore").read_text(encoding="utf-8") == text
    assert "already set up: nothing changed" in again.stdout


def test_init_creates_a_gitignore_where_none_exists(tmp_path):
    root = copy_fixture(tmp_path / "project")
    proc = cli("init", "--project-dir", str(root))
    assert proc.returncode == 0, proc.stderr
    assert (root / ".gitignore").read_text(encoding="utf-8").startswith(IGNORE_HEADER + "/bundle/\n")
    assert any(line.split()[:2] == [".gitignore", "created"] and "(no git repo yet)" in line
               for line in proc.stdout.splitlines())


def test_init_keeps_the_patterns_an_earlier_init_wrote(project):
    """A .gitignore of an earlier dptool (unanchored folder names) is not given them twice."""
    (project / ".gitignore").write_text("models/dptool_gold/\nmodels/dptool_semantic\nbundle/\n", encoding="utf-8")
    assert cli("init", "--project-dir", str(project)).returncode == 0
    text = (project / ".gitignore").read_text(encoding="utf-8")
    assert text.count("dptool_gold") == 1 and text.count("bundle/") == 1 and "/score/\n" in text
