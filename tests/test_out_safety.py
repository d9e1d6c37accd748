"""`--out` never costs a user a file: dptool replaces only an empty folder or one it wrote itself, and says so
before any work when it may not (issue 16: `--out mydata` deleted notes.txt, `--out .` replaced the project)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dptool.errors import DptoolError
from dptool.outdir import BUNDLE, LINK, MARKER, check_replaceable, publish, staging_folder
from tests.conftest import run_cli
from tests.terminal import as_from_a_terminal


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _refused(proc, *fragments: str) -> str:
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "[load]" not in proc.stdout, "refused only after work had started"
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def test_a_folder_of_the_users_is_refused_and_left_as_it_was(tmp_path, demo_project):
    mydata = tmp_path / "mydata"
    mydata.mkdir()
    (mydata / "notes.txt").write_text("keep\n", encoding="utf-8")
    proc = run_cli("generate", "--project-dir", str(demo_project.project_dir), "--out", str(mydata), "--quiet")
    _refused(proc, str(mydata), "not a benchmark bundle")
    assert _tree(mydata) == {"notes.txt": b"keep\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mydata"]  # no temp folder left beside it


def test_out_dot_inside_the_project_is_refused(demo_project):
    root = demo_project.project_dir
    before = sorted(p.name for p in root.iterdir())
    # the console script, as a user runs it: `python -m` would import the project's dptool/dbt_package folder
    dptool = Path(sys.executable).with_name("dptool")
    proc = subprocess.run([str(dptool), "generate", "--out", ".", "--quiet"], cwd=root, capture_output=True,
                          text=True, timeout=120)
    _refused(proc, str(root))
    assert sorted(p.name for p in root.iterdir()) == before
    assert (root / "dbt_project.yml").is_file() and (root / "models").is_dir()


def test_a_bundle_holding_a_file_of_the_users_is_refused(tmp_path, demo_project):
    out = tmp_path / "bundle"
    out.mkdir()
    (out / MARKER).write_text(json.dumps({"kind": BUNDLE.name}), encoding="utf-8")
    (out / "tasks.jsonl").write_text("{}\n", encoding="utf-8")
    (out / "my_answers.jsonl").write_text("mine\n", encoding="utf-8")
    proc = run_cli("generate", "--project-dir", str(demo_project.project_dir), "--out", str(out), "--quiet")
    _refused(proc, "my_answers.jsonl")
    assert (out / "my_answers.jsonl").read_text(encoding="utf-8") == "mine\n"


def test_a_destination_under_a_file_is_refused(tmp_path, demo_project):
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    proc = run_cli("generate", "--project-dir", str(demo_project.project_dir), "--out", str(tmp_path / "afile" / "b"),
                   "--quiet")
    _refused(proc, "afile")


def test_a_read_only_parent_is_refused_before_any_work(tmp_path, demo_project):
    """A read-only file system, made for this process alone (root ignores file modes; a bind mount does not)."""
    if not shutil.which("unshare"):
        pytest.skip("needs util-linux unshare to mount a read-only folder")
    parent = tmp_path / "ro"
    parent.mkdir()
    script = ('mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1" && shift && exec "$@"')
    cmd = ["unshare", "-m", "sh", "-c", script, "sh", str(parent), sys.executable, "-m", "dptool.cli", "generate",
           "--project-dir", str(demo_project.project_dir), "--out", str(parent / "bundle"), "--quiet"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 1 and "mount" in proc.stderr:
        pytest.skip(f"cannot mount here: {proc.stderr.strip()}")
    _refused(proc, str(parent), "cannot write here")


def test_an_empty_folder_and_a_bundle_dptool_wrote_are_replaced(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert check_replaceable(empty, BUNDLE) == empty.resolve()
    out = tmp_path / "bundle"
    for text in ("first", "second"):
        tmp = staging_folder(out.resolve())
        (tmp / "tasks.jsonl").write_text(text, encoding="utf-8")
        publish(tmp, out.resolve(), BUNDLE)
    assert _tree(out) == {MARKER: (out / MARKER).read_bytes(), "tasks.jsonl": b"second"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle", "empty"]


def test_a_bundle_from_before_the_marker_is_still_ours(tmp_path):
    out = tmp_path / "old"
    (out / "kb").mkdir(parents=True)
    (out / "tasks.jsonl").write_text("{}\n", encoding="utf-8")
    (out / "card.md").write_text("# Benchmark card\n", encoding="utf-8")
    assert check_replaceable(out, BUNDLE) == out.resolve()


def test_a_folder_of_another_kind_is_not_taken_for_a_bundle(tmp_path):
    out = tmp_path / "links"
    out.mkdir()
    (out / MARKER).write_text(json.dumps({"kind": LINK.name}), encoding="utf-8")
    (out / "report.json").write_text("{}", encoding="utf-8")
    with pytest.raises(DptoolError, match="not a benchmark bundle"):
        check_replaceable(out, BUNDLE)


# ---- issue 23: one rule for every file and folder a command writes --------------------------------------------------

@pytest.fixture
def bundle(tmp_path) -> Path:
    from tests.small_bundle import write_bundle

    return write_bundle(tmp_path / "B")


@pytest.fixture
def project(tmp_path) -> Path:
    """A folder `generate` takes for a project: the bundle check comes before anything reads it."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "dbt_project.yml").write_text("name: p\nprofile: p\n", encoding="utf-8")
    return root


def _one_line(proc, *fragments: str) -> str:
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in proc.stderr, proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


DEEP = {  # what a user put inside a bundle dptool wrote: replacing it deleted every one of them (issue 23, item 1)
    "a note in kb/": lambda b: (b / "kb" / "my_notes.md").write_text("notes\n", encoding="utf-8"),
    "a folder in kb/": lambda b: ((b / "kb" / "extra").mkdir(), (b / "kb" / "extra" / "a.md").write_text("# a\n")),
    "an empty folder in kb/": lambda b: (b / "kb" / "extra").mkdir(),
    "a rule document edited": lambda b: (b / "kb" / "rules" / "refunds_excluded.md").write_text("# mine\n"),
    "a file beside the rules": lambda b: (b / "kb" / "rules" / "draft.txt").write_text("draft\n"),
}
SHOWN = {"a note in kb/": "kb/my_notes.md", "a folder in kb/": "kb/extra/", "an empty folder in kb/": "kb/extra/",
         "a rule document edited": "kb/rules/refunds_excluded.md (changed since dptool wrote it)",
         "a file beside the rules": "kb/rules/draft.txt"}


@pytest.mark.parametrize("case", list(DEEP))
def test_a_bundle_holding_a_users_file_at_any_depth_is_refused(bundle, project, case):
    DEEP[case](bundle)
    before = _tree(bundle)
    proc = run_cli("generate", "--project-dir", str(project), "--out", str(bundle), "--quiet")
    _one_line(proc, str(bundle), "files dptool did not write", SHOWN[case])
    assert _tree(bundle) == before


@pytest.mark.parametrize("case", ["a note in kb/", "a folder in kb/", "a file beside the rules"])
def test_an_old_bundle_without_recorded_files_is_checked_at_every_depth_too(bundle, case):
    (bundle / MARKER).write_text(json.dumps({"kind": BUNDLE.name, "dptool": "0.0.9"}), encoding="utf-8")
    DEEP[case](bundle)
    with pytest.raises(DptoolError, match="files dptool did not write"):
        check_replaceable(bundle, BUNDLE)
    (bundle / MARKER).unlink()  # from before the marker: the signature (tasks.jsonl, card.md) stands for it
    with pytest.raises(DptoolError, match="files dptool did not write"):
        check_replaceable(bundle, BUNDLE)


def test_a_data_product_folder_refuses_a_users_sql(tmp_path):
    from dptool.outdir import DATA_PRODUCT

    out = tmp_path / "dp_orders"
    tmp = staging_folder(out.resolve())
    (tmp / "dp_orders__orders.sql").write_text("{{ config() }}\n-- data product x, written by dptool (import)\n"
                                               "select 1\n", encoding="utf-8")
    (tmp / "dp_orders.dp.json").write_text("{}", encoding="utf-8")
    publish(tmp, out.resolve(), DATA_PRODUCT)
    assert check_replaceable(out, DATA_PRODUCT) == out.resolve()
    (out / "my_model.sql").write_text("select 42 as mine\n", encoding="utf-8")
    with pytest.raises(DptoolError, match="my_model.sql"):
        check_replaceable(out, DATA_PRODUCT)
    (out / MARKER).write_text(json.dumps({"kind": DATA_PRODUCT.name}), encoding="utf-8")  # an old marker: signatures
    with pytest.raises(DptoolError, match="my_model.sql"):
        check_replaceable(out, DATA_PRODUCT)


def test_a_bundle_dptool_wrote_is_recorded_and_replaced(bundle, tmp_path):
    marker = json.loads((bundle / MARKER).read_text(encoding="utf-8"))
    assert sorted(marker["files"]) == ["card.md", "graph.json", "kb/metrics.md", "kb/rules/refunds_excluded.md",
                                       "tasks.jsonl", "warehouse.duckdb"]
    from tests.small_bundle import write_bundle

    write_bundle(bundle)  # replaced: everything in it is dptool's, unchanged
    assert sorted(p.name for p in tmp_path.iterdir()) == ["B"]


def test_answer_never_writes_inside_a_bundle(bundle):
    before = _tree(bundle)
    for target in (bundle / "tasks.jsonl", bundle / "kb" / "answers.jsonl", bundle / "answers.jsonl"):
        proc = run_cli("answer", str(bundle), "--agent", "empty", "--out", str(target))
        _one_line(proc, str(target), "inside the benchmark bundle", "dptool generate")
    assert _tree(bundle) == before


def test_answer_replaces_its_own_answers_file_and_no_other(bundle, tmp_path):
    out = tmp_path / "answers.jsonl"
    for agent in ("gold-sql", "empty"):  # the second run replaces what the first wrote
        proc = run_cli("answer", str(bundle), "--agent", agent, "--out", str(out))
        assert proc.returncode == 0, proc.stderr
    assert out.read_text(encoding="utf-8") == ""
    out.write_text('{"task_id": "t_0001", "answer": 42}\n', encoding="utf-8")  # edited by hand since
    _one_line(run_cli("answer", str(bundle), "--agent", "empty", "--out", str(out)), str(out), "changed since")
    mine = tmp_path / "mine.jsonl"
    mine.write_text("mine\n", encoding="utf-8")
    _one_line(run_cli("answer", str(bundle), "--agent", "empty", "--out", str(mine)), str(mine),
              "dptool did not write it")
    assert mine.read_text(encoding="utf-8") == "mine\n"
    assert out.read_text(encoding="utf-8") == '{"task_id": "t_0001", "answer": 42}\n'


def test_graph_never_overwrites_the_project_file(project):
    before = (project / "dbt_project.yml").read_bytes()
    proc = run_cli("graph", "--project-dir", str(project), "--out", "dbt_project.yml", cwd=project)
    _one_line(proc, "dbt_project.yml", "dptool did not write it")
    assert (project / "dbt_project.yml").read_bytes() == before


def test_score_never_overwrites_a_users_report(bundle, tmp_path):
    answers = tmp_path / "answers.jsonl"
    assert run_cli("answer", str(bundle), "--agent", "gold-sql", "--out", str(answers)).returncode == 0
    out = tmp_path / "mine"
    out.mkdir()
    for name in ("report.html", "score.md"):
        (out / name).write_text("my own\n", encoding="utf-8")
        _one_line(run_cli("score", str(bundle), str(answers), "--out", str(out)), str(out / name),
                  "dptool did not write it")
        (out / name).unlink()
    (out / "score.md").write_text("my own\n", encoding="utf-8")
    _one_line(run_cli("score", str(bundle), str(answers), "--out", str(out)), "score.md")
    assert sorted(p.name for p in out.iterdir()) == ["score.md"] and (out / "score.md").read_text() == "my own\n"
    _one_line(run_cli("score", str(bundle), str(answers), "--out", str(bundle)), str(bundle), "benchmark bundle")
    ours = tmp_path / "ours"
    for _ in range(2):  # its own reports are replaced
        assert run_cli("score", str(bundle), str(answers), "--out", str(ours)).returncode == 0


def test_eval_refuses_a_folder_of_the_users_and_one_inside_a_bundle(bundle, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep\n", encoding="utf-8")
    args = ("eval", str(bundle), "--model", "ollama:none", "--ollama-host", "http://127.0.0.1:9")
    _one_line(run_cli(*args, "--out", str(mine)), str(mine), "not a run folder")
    _one_line(run_cli(*args, "--out", str(bundle / "run")), "inside the benchmark bundle")
    assert _tree(mine) == {"notes.txt": b"keep\n"} and not (bundle / "run").exists()


def test_the_dp_and_judge_outputs_never_overwrite_a_users_file(tmp_path, project):
    mine = tmp_path / "mine.json"
    mine.write_text("{}\n", encoding="utf-8")
    for args in (("dp", "export", "--project-dir", str(project), "--out", str(mine)),
                 ("dp", "score", str(mine), str(mine), "--out", str(mine)),
                 ("judge-agreement", str(mine), "--llm", "ollama:x", "--out", str(mine))):
        _one_line(run_cli(*args), str(mine), "dptool did not write it")
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "dp_bench.md").write_text("mine\n", encoding="utf-8")
    _one_line(run_cli("dp", "bench", "--project-dir", str(project), "--out", str(tmp_path / "bench")), "dp_bench.md")
    assert mine.read_text(encoding="utf-8") == "{}\n"


def test_demo_data_never_overwrites_a_users_csv(tmp_path):
    out = tmp_path / "seeds"
    for _ in range(2):  # into a new folder, then over what it wrote
        proc = run_cli("demo-data", "--scale", "0.002", "--out", str(out))
        assert proc.returncode == 0, proc.stderr
    (out / "olist_orders_dataset.csv").write_text("order_id\nmine\n", encoding="utf-8")
    before = _tree(out)
    _one_line(run_cli("demo-data", "--scale", "0.002", "--out", str(out)), "olist_orders_dataset.csv", "changed since")
    assert _tree(out) == before and sorted(p.name for p in tmp_path.iterdir()) == ["seeds"]


def test_ablate_refuses_a_bundle_whose_card_changed_before_any_work(bundle, project):
    (bundle / "card.md").write_text("# Benchmark card\n\nmy notes\n", encoding="utf-8")
    proc = run_cli("ablate", "pairing", "--project-dir", str(project), str(bundle))
    _one_line(proc, "card.md", "changed since dptool wrote it")
    assert (bundle / "card.md").read_text(encoding="utf-8") == "# Benchmark card\n\nmy notes\n"


@pytest.mark.parametrize(("command", "out", "shown"), [
    ("answer", "/dev/full", "/dev/full: exists and is not a regular file"),
    ("answer", "/proc/x.jsonl", "/proc/x.jsonl: cannot write here (nothing can be created in /proc: No such file or "
                                "directory); choose another --out"),
    ("score", "/proc/d", "/proc/d: cannot write here"),
    ("score", "/dev/null/x", "/dev/null/x: cannot be created: /dev/null is a file"),
], ids=["answer-dev-full", "answer-proc-file", "score-proc-folder", "score-under-dev-null"])
def test_an_out_that_cannot_be_written_is_one_line_naming_it(bundle, tmp_path, command, out, shown):
    answers = tmp_path / "answers.jsonl"
    answers.write_text("", encoding="utf-8")
    args = ("answer", str(bundle), "--agent", "empty") if command == "answer" else ("score", str(bundle), str(answers))
    _one_line(run_cli(*args, "--out", out), shown)


def test_a_full_disk_is_one_line_and_leaves_nothing_half_written(bundle, tmp_path):
    """ENOSPC for real: an 8 KiB tmpfs mounted for this process alone; the answers file is larger."""
    if not shutil.which("unshare"):
        pytest.skip("needs util-linux unshare to mount a small tmpfs")
    disk = tmp_path / "disk"
    disk.mkdir()
    big = tmp_path / "big"
    from tests.small_bundle import TASKS, write_bundle

    tasks = [{**TASKS[1], "task_id": f"t_{i:05d}", "question": "x" * 200} for i in range(400)]
    write_bundle(big)
    (big / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    # the command, then what it left on the tmpfs (which goes with the namespace)
    script = 'mount -t tmpfs -o size=8k tmpfs "$1" && d="$1" && shift && "$@"; rc=$?; echo "left: $(ls -A "$d")"; ' \
             'exit $rc'
    cmd = ["unshare", "-m", "sh", "-c", script, "sh", str(disk), sys.executable, "-m", "dptool.cli", "answer", str(big),
           "--agent", "gold-sql", "--out", str(disk / "answers.jsonl")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 1 and "mount" in proc.stderr:
        pytest.skip(f"cannot mount here: {proc.stderr.strip()}")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]  # after the progress label
    assert errors == [f"error: {disk / 'answers.jsonl'}: cannot be written (No space left on device); nothing was "
                      "written there"], proc.stderr
    assert proc.stdout.splitlines()[-1] == "left: ", proc.stdout  # no temporary file, no half an answers file


def test_what_a_run_killed_outright_left_beside_the_bundle_is_cleared_by_the_next(bundle, tmp_path):
    """Hostile round: a generate SIGKILLed while it wrote the bundle left its staging folder (a copy of the warehouse)
    beside it for good; one killed between publish's two renames left the bundle aside and no bundle."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)  # a process that has ended
    staging = tmp_path / f".B.tmp-{pid}-x1"
    (staging / "kb").mkdir(parents=True)
    (staging / "warehouse.duckdb").write_bytes(b"half")
    before = _tree(bundle)
    bundle.rename(tmp_path / f".B.old-{pid}-x2")  # the last complete bundle, moved aside
    mine = tmp_path / f".B.tmp-{os.getpid()}-x3"  # a run still running (this one): left alone
    mine.mkdir()
    tmp = staging_folder(bundle)
    assert _tree(bundle) == before and not staging.exists() and mine.is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["B", mine.name, tmp.name])


def test_serve_and_inspect_import_refuse_a_users_folder_and_one_inside_a_bundle(bundle, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep\n", encoding="utf-8")
    log = tmp_path / "log.eval"
    log.write_text("x", encoding="utf-8")
    for args in (("serve", str(bundle), "--out", str(mine)), ("inspect-import", str(log), "--out", str(mine))):
        _one_line(run_cli(*args), str(mine), "not a run folder")
    for args in (("serve", str(bundle), "--out", str(bundle / "run")),
                 ("inspect-import", str(log), "--out", str(bundle / "run"))):
        _one_line(run_cli(*args), "inside the benchmark bundle")
    assert _tree(mine) == {"notes.txt": b"keep\n"} and not (bundle / "run").exists()
    proc = run_cli("serve", str(bundle), "--sql-timeout", "nan", "--out", str(tmp_path / "run"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "'nan' is not a finite number" in proc.stderr


def test_the_marker_of_a_bundle_is_byte_identical_for_the_same_bundle(tmp_path):
    """Same seed, same data, same manifest: the same bundle, marker included. DuckDB does not write a database byte
    for byte the same, so the warehouse is recorded by name (a change to it is not seen; every other file's is)."""
    from tests.small_bundle import write_bundle

    first, second = write_bundle(tmp_path / "one"), write_bundle(tmp_path / "two")
    assert (first / MARKER).read_bytes() == (second / MARKER).read_bytes()
    assert json.loads((first / MARKER).read_text(encoding="utf-8"))["files"]["warehouse.duckdb"] == \
        ["(recorded by name)"]


# ---- held-out round four (issue 23's "done when"): paths spelled through symlinks, names like dptool's own ---------

def _through_a_link(bundle: Path, tmp_path: Path, inside: str) -> Path:
    link = tmp_path / f"link-{inside.replace('/', '-') or 'root'}"
    link.symlink_to(bundle / inside if inside else bundle)
    return link


@pytest.mark.parametrize(("command", "inside", "out"), [
    ("answer", "kb", "answers.jsonl"), ("answer", "kb/rules", "answers.jsonl"), ("answer", "", "answers.jsonl"),
    ("score", "kb", "report"), ("graph", "kb/rules", "graph.json"), ("eval", "kb", "run"), ("serve", "kb", "run"),
    ("compare", "kb", "cmp"), ("demo-data", "kb", "seeds"),
], ids=["answer-kb", "answer-rules", "answer-bundle", "score-kb", "graph-rules", "eval-kb", "serve-kb", "compare-kb",
        "demo-data-kb"])
def test_an_out_through_a_symlink_into_a_bundle_is_inside_it(bundle, project, tmp_path, command, inside, out):
    """`--out link/x` with `link -> bundle/kb`: only `link` was looked at, and answer wrote kb/answers.jsonl and a
    kb/.dptool marker into the bundle, rc 0."""
    before = _tree(bundle)
    target = str(_through_a_link(bundle, tmp_path, inside) / out)
    answers = tmp_path / "answers.jsonl"
    answers.write_text("", encoding="utf-8")
    args = {"answer": ("answer", str(bundle), "--agent", "empty"), "score": ("score", str(bundle), str(answers)),
            "graph": ("graph", "--project-dir", str(project)),
            "eval": ("eval", str(bundle), "--model", "ollama:x", "--ollama-host", "http://127.0.0.1:9"),
            "serve": ("serve", str(bundle)), "compare": ("compare", str(answers), "--bundle", str(bundle)),
            "demo-data": ("demo-data", "--scale", "0.002")}[command]
    _one_line(run_cli(*args, "--out", target), "inside the benchmark bundle")
    assert _tree(bundle) == before


@pytest.mark.parametrize("name", ["kb/.notes.tmp", ".todo.tmp-1", "kb/rules/.draft.md.tmp", "kb/.x.tmp-3-y"])
def test_a_users_file_named_like_a_temporary_one_is_not_taken_for_dptools(bundle, name):
    """Any `.*.tmp` at any depth was skipped as dptool's leftover: replacing the bundle deleted the user's file."""
    (bundle / name).write_text("mine\n", encoding="utf-8")
    with pytest.raises(DptoolError, match="files dptool did not write"):
        check_replaceable(bundle, BUNDLE)


@pytest.mark.parametrize("name", [".card.md.tmp-abc123", "..dptool.tmp-4242", "kb/.metrics.md.tmp-x",
                                  ".tasks.jsonl.ab12.tmp"])
def test_what_dptool_left_beside_its_own_files_is_still_its_own(bundle, name):
    (bundle / name).write_text("half\n", encoding="utf-8")
    assert check_replaceable(bundle, BUNDLE) == bundle.resolve()


@pytest.mark.parametrize(("args", "shown"), [
    (("answer", "{B}", "--agent", "empty", "--out", "{B}/../B/answers.jsonl"), "inside the benchmark bundle"),
    (("answer", "{B}", "--agent", "empty", "--out", "{L}/answers.jsonl"), "inside the benchmark bundle"),
    (("score", "{B}", "{A}", "--out", "{B}/kb/../kb"), "inside the benchmark bundle"),
    (("demo-data", "--scale", "0.002", "--out", "{B}/kb/seeds"), "inside the benchmark bundle"),
    (("rule", "new", "../../evil", "--metric", "aov", "--project-dir", "{P}"), "a rule id is lower-case"),
    (("rule", "new", "x/y", "--metric", "aov", "--project-dir", "{P}"), "a rule id is lower-case"),
], ids=["dot-dot-back-in", "legacy-bundle-without-marker", "dot-dot-kb", "demo-data-in-kb", "rule-id-traversal",
        "rule-id-slash"])
def test_odd_paths_into_a_bundle_are_refused(bundle, project, tmp_path, args, shown):
    legacy = tmp_path / "L"
    legacy.mkdir()
    (legacy / "tasks.jsonl").write_text("{}\n", encoding="utf-8")
    (legacy / "card.md").write_text("# Benchmark card\n", encoding="utf-8")
    answers = tmp_path / "answers.jsonl"
    answers.write_text("", encoding="utf-8")
    before = _tree(bundle), _tree(legacy)
    _one_line(run_cli(*(a.format(B=bundle, L=legacy, A=answers, P=project) for a in args), cwd=tmp_path), shown)
    assert (_tree(bundle), _tree(legacy)) == before


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_a_signal_during_a_query_of_answer_is_one_line_and_keeps_the_answers_file(tmp_path, sig):
    """SIGINT while `answer` ran a task's SQL: DuckDB raised RuntimeError("Query interrupted") and the user got a
    traceback (the answers file was kept). Then, under load, the SIGINT was lost in 4 of 8 runs and the query ran
    on (the query ran in DuckDB's execute on the main thread): it runs on a thread of its own now."""
    import signal
    import time

    from tests.small_bundle import TASKS, write_bundle

    bundle = write_bundle(tmp_path / "B")
    slow = {**TASKS[1], "task_id": "t_slow", "gold_sql": "select count(*) as value from range(100000000000) t(i) "
                                                        "where i % 7 = 3"}
    (bundle / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in [TASKS[0], slow]), encoding="utf-8")
    out = tmp_path / "answers.jsonl"
    assert run_cli("answer", str(bundle), "--agent", "empty", "--out", str(out)).returncode == 0
    before = out.read_bytes()  # what an earlier run wrote: kept whatever ends this one
    proc = subprocess.Popen([sys.executable, "-m", "dptool.cli", "answer", str(bundle), "--agent", "gold-sql", "--out",
                             str(out)], stderr=subprocess.PIPE, text=True,
                            preexec_fn=as_from_a_terminal)
    time.sleep(8)  # the slow query is running (a Ctrl-C at start-up is another test's)
    proc.send_signal(getattr(signal, sig))
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    assert "Traceback" not in err, err
    if sig == "SIGINT":
        assert proc.returncode == 130 and err.strip().splitlines()[-1] == "error: interrupted", err
    assert out.read_bytes() == before  # no temporary file left beside it either (a kill -9 comes before any write)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".dptool", "B", "answers.jsonl"]


@pytest.mark.parametrize("command", ["answer", "score", "graph", "eval", "serve", "demo-data", "compare"])
def test_round_four_a_read_only_parent_is_refused_for_every_command(bundle, project, tmp_path, command):
    """generate's read-only case, for every other command that writes (a read-only bind mount, this process alone)."""
    if not shutil.which("unshare"):
        pytest.skip("needs util-linux unshare to mount a read-only folder")
    parent = tmp_path / "ro"
    parent.mkdir()
    answers = tmp_path / "answers.jsonl"
    answers.write_text("", encoding="utf-8")
    target = str(parent / "out")
    args = {"answer": ("answer", str(bundle), "--agent", "empty"), "score": ("score", str(bundle), str(answers)),
            "graph": ("graph", "--project-dir", str(project)),
            "eval": ("eval", str(bundle), "--model", "ollama:x", "--ollama-host", "http://127.0.0.1:9"),
            "serve": ("serve", str(bundle)), "demo-data": ("demo-data", "--scale", "0.002"),
            "compare": ("compare", str(answers), "--bundle", str(bundle))}[command]
    script = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1" && shift && exec "$@"'
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", str(parent), sys.executable, "-m", "dptool.cli",
                           *args, "--out", target], capture_output=True, text=True, timeout=120)
    if proc.returncode != 1 and "mount" in proc.stderr:
        pytest.skip(f"cannot mount here: {proc.stderr.strip()}")
    _one_line(proc, "cannot write here", "Read-only file system")
    assert list(parent.iterdir()) == []
