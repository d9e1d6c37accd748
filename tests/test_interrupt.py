"""Ctrl-C, for real: a SIGINT sent to `dptool generate` (a new process) at several points of a run exits 130 with
one line and no traceback, and leaves the project's generated folders as the last good run left them."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dptool.generate.pipeline import GENERATED, KEPT, KEPT_LIST, last_good
from dptool.project.dbt import DbtProject
from tests.subscriptions import GENERATE_ARGS, copy_fixture, set_up
from tests.terminal import as_from_a_terminal

LAST_GOOD = {  # a gold folder "an earlier run wrote": moved aside during a run, so dbt never parses it
    "t_0001.sql": "-- written by `dptool generate`; do not edit\nselect 1 as value\n",
    "_dptool_gold.yml": "# written by `dptool generate`; do not edit\nversion: 2\nmodels: []\n",
}


@pytest.fixture(scope="module")
def project(demo_project, tmp_path_factory) -> Path:
    """A copy of the built demo project whose models/dptool_gold holds the last good run's models."""
    dest = tmp_path_factory.mktemp("interrupt") / "project"
    shutil.copytree(demo_project.project_dir, dest, symlinks=True,
                    ignore=shutil.ignore_patterns("logs", "dptool_gold", "dptool_ablation", "__pycache__"))
    gold = dest / "models" / "dptool_gold"
    gold.mkdir()
    for name, text in LAST_GOOD.items():
        (gold / name).write_text(text, encoding="utf-8")
    return dest


def _snapshot(root: Path) -> dict[str, str]:
    """Every file of the project but dbt's own artifacts and logs, by its content."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.relative_to(root).parts[0] not in ("target", "logs")}


@contextlib.contextmanager
def _running(args: list[str], **popen) -> Iterator[subprocess.Popen]:
    """dptool in a new process that gets SIGINT as from a terminal, stderr piped; killed if still running when the
    block ends."""
    proc = subprocess.Popen([sys.executable, "-m", "dptool.cli", *args], preexec_fn=as_from_a_terminal,
                            stderr=subprocess.PIPE, text=True, **popen)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _interrupt(args: list[str], marker: str, delay: float) -> tuple[subprocess.CompletedProcess, float]:
    """Run dptool, send SIGINT `delay` seconds after `marker` appears on its stdout; the process and the seconds it
    took to exit after the signal."""
    seen = ""
    with _running(args, stdout=subprocess.PIPE) as proc:
        while marker not in seen:
            line = proc.stdout.readline()
            assert line, f"dptool ended before {marker!r}: {seen}{proc.stderr.read()}"
            seen += line
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        sent = time.perf_counter()
        out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, seen + out, err), time.perf_counter() - sent


def _assert_interrupted(proc) -> None:
    assert proc.returncode == 130, proc.stdout[-2000:] + proc.stderr
    assert proc.stderr.splitlines() == ["error: interrupted"], proc.stderr


@pytest.mark.parametrize(("marker", "delay"), [
    # dbt parses the project (and generates dataclass code with string execs: see cli/interrupt.py)
    ("[probe]", 1.0),
    ("[materialize]", 4.0),  # dbt compiles the gold models, or their queries run on threads
])
def test_sigint_during_generate_exits_130_and_leaves_the_last_good_run(project, tmp_path, marker, delay):
    before = _snapshot(project)
    out = tmp_path / "bundle"
    proc, seconds = _interrupt(["generate", "--project-dir", str(project), "--out", str(out)], marker, delay)
    _assert_interrupted(proc)
    assert seconds < 20, f"{seconds:.1f} s from SIGINT to exit"
    assert _snapshot(project) == before  # models/dptool_gold byte for byte, no dptool_batch, nothing else
    assert not (project / "models" / "dptool_batch").exists()
    assert not (project / "target" / KEPT).exists()
    assert not out.exists() and not list(tmp_path.glob(".bundle.*"))  # no bundle, not even half of one


def test_sigint_while_the_bundle_is_written_leaves_no_bundle_and_the_project_as_it_was(tmp_path):
    """The SIGINT is sent the moment export's staging folder appears (the subscriptions fixture: a small project)."""
    root = copy_fixture(tmp_path / "project")
    set_up(root)
    before = _snapshot(root)
    out = tmp_path / "bundle"
    with _running(["generate", "--project-dir", str(root), "--out", str(out), *GENERATE_ARGS],
                  stdout=subprocess.DEVNULL) as proc:
        while not list(tmp_path.glob(".bundle.tmp-*")):
            assert proc.poll() is None, f"generate ended before export began: {proc.returncode} {proc.stderr.read()}"
            time.sleep(0.001)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    _assert_interrupted(subprocess.CompletedProcess(proc.args, proc.returncode, "", err))
    assert _snapshot(root) == before
    assert not out.exists() and not list(tmp_path.glob(".bundle.*"))  # no bundle, not even half of one


def _one_command(folder: Path, module: str, source: str, command: str, **run) -> subprocess.CompletedProcess:
    """`python -m <module> <command>` in `folder`, the module holding `source` (a click command of `cli`, and what it
    needs) under dptool's Group: the CLI's own handling of what the command raises."""
    (folder / f"{module}.py").write_text(
        "import click\nfrom dptool.cli.main import Group\n\n@click.group(cls=Group)\ndef cli():\n    pass\n\n"
        f"{source}\n\ncli()\n", encoding="utf-8")
    return subprocess.run([sys.executable, "-m", module, command], cwd=folder, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, timeout=60, **run)


def test_an_interrupt_that_ended_a_string_exec_still_exits_130(tmp_path):
    """CPython marks a `python -m` process for death by SIGINT when a KeyboardInterrupt ends a string exec (as in
    dbt's generated dataclass code while it parses), whatever its exit code: the CLI's exit clears the mark."""
    proc = _one_command(tmp_path, "stopped_in_exec", "@cli.command()\ndef parse():\n"
                                                     "    exec('raise KeyboardInterrupt', {})", "parse")
    _assert_interrupted(proc)


def test_an_interrupt_raised_in_a_finalizer_still_stops_the_command(tmp_path):
    """A Ctrl-C that lands while the garbage collector closes a generator (a query_each whose clean-up joins its
    threads) is raised in that finalizer, where Python only prints it and goes on: the CLI raises it again."""
    proc = _one_command(tmp_path, "stopped_in_finalizer",
                        "def rows():\n    try:\n        yield 1\n    finally:\n        raise KeyboardInterrupt\n\n"
                        "@cli.command()\ndef run():\n    it = rows()\n    next(it)\n    del it\n"
                        "    import time\n    time.sleep(5)\n    print('went on to the end')", "run",
                        preexec_fn=as_from_a_terminal)
    assert "went on to the end" not in proc.stdout
    _assert_interrupted(proc)


def test_an_interrupt_before_a_staging_folder_has_an_owner_leaves_no_folder(tmp_path):
    """A Ctrl-C can land between a staging folder's making and the caller's try that would remove it (the moment
    mkdir returns): the command still leaves nothing beside its output, while the last good output stays."""
    (tmp_path / "out").mkdir()
    proc = _one_command(tmp_path, "stopped_after_staging",
                        "from pathlib import Path\nfrom dptool.outdir import staging_folder\n\n"
                        "@cli.command()\ndef write():\n    staging_folder(Path('out').absolute())\n"
                        "    raise KeyboardInterrupt", "write")
    _assert_interrupted(proc)
    assert {p.name for p in tmp_path.iterdir()} - {"__pycache__"} == {"out", "stopped_after_staging.py"}


SLOW = "'select count(*) as n from range(10000000000) a where a.range % 7 = 3'"
QUERIES = {  # the slow query, as query_each runs it, and as the shared CTE of query_shared's queries
    "query_each": f"[{SLOW}] * 8",
    "query_shared": f"[SharedQuery(((\"slow\", {SLOW}),), lambda c: f'with slow as ({{c[0][1]}}) select n + {{k}} "
                    "from slow') for k in range(8)]",
}


@pytest.mark.parametrize("method", sorted(QUERIES))
def test_sigint_while_queries_run_on_threads_stops_them(demo_project, tmp_path, method):
    """query_each's queries run on worker threads, where no KeyboardInterrupt reaches: they are interrupted,
    and so is a shared CTE query_shared is computing."""
    db = demo_project.connection().path
    script = tmp_path / "slow.py"
    script.write_text(
        "import sys\nfrom dptool.project.warehouse import Warehouse\nfrom dptool.sql import SharedQuery\n"
        f"queries = {QUERIES[method]}\n"
        "with Warehouse(sys.argv[1]) as wh:\n"
        "    print('running', flush=True)\n"
        f"    for result in wh.{method}(queries):\n"
        "        print(result, flush=True)\n", encoding="utf-8")
    proc = subprocess.Popen([sys.executable, str(script), db], preexec_fn=as_from_a_terminal,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.stdout.readline() == "running\n"
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    start = time.perf_counter()
    _, err = proc.communicate(timeout=60)
    assert time.perf_counter() - start < 5, "the process waited for its queries"
    assert "KeyboardInterrupt" in err  # a bare script: Python's own report, the queries did not finish first


# --- last_good, in-process: what a failed run, and one killed outright, leave behind -------------------------------

def _fake_project(root: Path) -> DbtProject:
    (root / "target").mkdir(parents=True)
    (root / "dbt_project.yml").write_text("name: p\nprofile: p\n", encoding="utf-8")
    for folder in GENERATED:
        (root / folder).mkdir(parents=True)
        (root / folder / "a.sql").write_text(f"-- last good {folder}\n", encoding="utf-8")
    return DbtProject(root, profiles_dir=root)


def test_a_failed_run_puts_the_last_good_folders_back(tmp_path):
    project = _fake_project(tmp_path / "p")
    before = _snapshot(project.project_dir)
    with pytest.raises(KeyboardInterrupt), last_good(project, GENERATED, echo=lambda _: None):
        for folder in GENERATED:
            assert not (project.project_dir / folder).exists()  # aside while the run compiles
        (project.project_dir / GENERATED[0]).mkdir(parents=True)
        (project.project_dir / GENERATED[0] / "half.sql").write_text("select", encoding="utf-8")
        raise KeyboardInterrupt
    assert _snapshot(project.project_dir) == before
    assert not (project.target_dir / KEPT).exists()


def test_a_completed_run_keeps_its_own_folders(tmp_path):
    project = _fake_project(tmp_path / "p")
    with last_good(project, GENERATED, echo=lambda _: None):
        (project.project_dir / GENERATED[0]).mkdir(parents=True)
        (project.project_dir / GENERATED[0] / "new.sql").write_text("select 2", encoding="utf-8")
    assert sorted(p.name for p in (project.project_dir / GENERATED[0]).iterdir()) == ["new.sql"]
    assert not (project.project_dir / GENERATED[1]).exists() and not (project.target_dir / KEPT).exists()


def test_a_run_killed_outright_is_undone_by_the_next(tmp_path):
    project = _fake_project(tmp_path / "p")
    before = _snapshot(project.project_dir)
    keep = project.target_dir / KEPT
    # what a SIGKILL leaves after the folders were moved aside and a partial gold folder was written
    keep.mkdir()
    (keep / KEPT_LIST).write_text(json.dumps({"folders": [str(f) for f in GENERATED],
                                              "present": [str(f) for f in GENERATED]}), encoding="utf-8")
    for folder in GENERATED:
        shutil.move(project.project_dir / folder, keep / folder)
    (project.project_dir / GENERATED[0]).mkdir()
    (project.project_dir / GENERATED[0] / "partial.sql").write_text("select", encoding="utf-8")
    notes = []
    with pytest.raises(RuntimeError), last_good(project, GENERATED, echo=notes.append):
        raise RuntimeError("the next run fails too")
    assert _snapshot(project.project_dir) == before
    assert len(notes) == 1 and "earlier run was killed" in notes[0]


def test_a_run_killed_while_it_wrote_the_list_of_kept_folders_does_not_stop_the_next(tmp_path):
    """Issue 23, hostile round: a SIGKILL between creating folders.json and writing it left an empty list, and every
    later run failed reading it (a JSONDecodeError traceback). The list is now written whole or not at all, and an
    empty one (from an older dptool) means nothing was moved yet."""
    project = _fake_project(tmp_path / "p")
    before = _snapshot(project.project_dir)
    keep = project.target_dir / KEPT
    keep.mkdir()
    (keep / KEPT_LIST).write_text("", encoding="utf-8")
    notes = []
    with pytest.raises(RuntimeError), last_good(project, GENERATED, echo=notes.append):
        raise RuntimeError("this run fails: the project's folders come back as they were")
    assert not keep.exists() and len(notes) == 1 and "earlier run was killed" in notes[0]
    assert _snapshot(project.project_dir) == before


def test_the_folders_are_moved_aside_in_one_rename(tmp_path):
    """Hostile round: moved into a folder whose parent did not exist, shutil.move copied and deleted, and a Ctrl-C in
    the copy put the partial copy back in place of the gold folder (most gold models lost). A rename keeps the inode."""
    project = _fake_project(tmp_path / "p")
    inodes = {folder: (project.project_dir / folder).stat().st_ino for folder in GENERATED}
    with last_good(project, GENERATED, echo=lambda _: None):
        for folder in GENERATED:
            assert (project.target_dir / KEPT / folder).stat().st_ino == inodes[folder]
