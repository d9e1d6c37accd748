"""One run at a time (issue 23, items 8 and 12): a second command that writes into a project, or a second eval into
one run folder, refuses in one line naming the lock and the pid holding it; a lock left by a killed run is taken
over with a note, and the scratch folder such a run left (models/dptool_batch/) is removed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dptool.project.lock import LOCK, SCRATCH, clear_scratch, hold
from tests.conftest import run_cli
from tests.subscriptions import GENERATE_ARGS, copy_fixture, set_up

HOLDER = """
import sys, time
from dptool.project.lock import hold, project_lock
what, path = sys.argv[1], sys.argv[2]
lock = project_lock(path, "dptool generate") if what == "project" else hold(path, "dptool eval", "run folder")
with lock:
    print("held", flush=True)
    time.sleep(600)
"""


def _holder(what: str, path: Path) -> subprocess.Popen:
    """A process holding a lock (a dptool run, as far as the lock can tell) until it is killed."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, what, str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "held\n"
    return proc


def _kill(proc: subprocess.Popen) -> None:
    proc.kill()
    proc.wait()


def _refused_by_lock(proc, lock: Path, pid: int) -> None:
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: {lock}: another dptool run holds the ") and f"(pid {pid}" in lines[0], lines[0]


@pytest.fixture
def project(tmp_path) -> Path:
    """The subscriptions fixture as its owners have it: nothing built (each command is refused before any work)."""
    return copy_fixture(tmp_path / "project")


def test_every_command_that_writes_into_a_project_is_refused_while_another_runs(project, tmp_path):
    from tests.small_bundle import write_bundle

    bundle = write_bundle(tmp_path / "B")
    dp_file = tmp_path / "dp.json"
    dp_file.write_text("{}", encoding="utf-8")
    before = sorted(p.relative_to(project).as_posix() for p in project.rglob("*"))
    holder = _holder("project", project)
    try:
        lock = project / "target" / LOCK
        for args in (("generate", "--out", str(tmp_path / "out")), ("init",),
                     ("rule", "new", "late", "--metric", "mrr"), ("ablate", "pairing", str(bundle)),
                     ("link", "--llm", "ollama:x"),
                     ("dp", "create", "a request"), ("dp", "import", str(dp_file)), ("dp", "provenance"),
                     ("dp", "export", "--out", str(tmp_path / "dp_out.json"))):
            proc = run_cli(*args, "--project-dir", str(project))
            _refused_by_lock(proc, lock, holder.pid)
        assert json.loads(lock.read_text(encoding="utf-8"))["pid"] == holder.pid  # the holder's lock stays its own
    finally:
        _kill(holder)
    after = sorted(p.relative_to(project).as_posix() for p in project.rglob("*"))
    assert sorted(set(after) - {"target", f"target/{LOCK}"}) == before  # nothing but the lock the holder made
    assert not (tmp_path / "out").exists() and not (tmp_path / "dp_out.json").exists()


def test_a_lock_left_by_a_killed_run_is_taken_over_with_a_note_and_its_scratch_removed(project):
    holder = _holder("project", project)
    _kill(holder)  # as kill -9 would: the lock file stays, with the dead run's pid
    lock = project / "target" / LOCK
    assert json.loads(lock.read_text(encoding="utf-8"))["pid"] == holder.pid
    batch = project / "models" / "dptool_batch"  # what a run killed during materialize leaves
    batch.mkdir()
    (batch / "batch_t_0001.sql").write_text("select 1", encoding="utf-8")
    proc = run_cli("rule", "new", "late_fee", "--metric", "mrr", "--project-dir", str(project))
    assert proc.returncode == 0, proc.stderr
    assert f"took over {lock}: the run that left it (pid {holder.pid}, `dptool generate`) is no longer running" \
        in proc.stdout
    assert f"removed {batch}" in proc.stdout and not batch.exists()
    assert not lock.exists()  # let go when the command ended


def test_a_scratch_folder_holding_a_users_file_is_left(tmp_path):
    folder = tmp_path / "models" / "dptool_batch"
    folder.mkdir(parents=True)
    (folder / "batch_x.sql").write_text("select 1", encoding="utf-8")
    (folder / "mine.sql").write_text("select 2", encoding="utf-8")
    notes = []
    clear_scratch(tmp_path, notes.append)
    assert (folder / "mine.sql").is_file() and len(notes) == 1 and "mine.sql" in notes[0]


def test_the_scratch_folders_are_those_the_runs_write():
    from dptool.generate import ablate, link
    from dptool.project.batch import BATCH_DIR

    assert [rel for rel, _ in SCRATCH] == [BATCH_DIR, ablate.FOLDER, Path("models") / link.TMP_FOLDER,
                                           Path("macros") / link.TMP_FOLDER]


def test_the_lock_is_reentrant_within_a_process_and_let_go_after(tmp_path):
    path = tmp_path / LOCK
    with hold(path, "outer", "project", echo=print), hold(path, "inner", "project", echo=print):
        assert json.loads(path.read_text(encoding="utf-8"))["command"] == "outer"
    assert not path.exists()
    with hold(path, "again", "project", echo=print):
        assert path.is_file()


# ---- real runs: two generates, and a generate killed during materialize --------------------------------------------

@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    root = copy_fixture(tmp_path_factory.mktemp("lock") / "project")
    set_up(root)
    return root


def test_two_generates_in_one_project_the_second_refused_then_a_kill_9_is_cleaned_by_the_next(built, tmp_path):
    gold = built / "models" / "dptool_gold"
    batch = built / "models" / "dptool_batch"
    first = subprocess.Popen([sys.executable, "-m", "dptool.cli", "generate", "--project-dir", str(built), "--out",
                              str(tmp_path / "a"), *GENERATE_ARGS], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        lock = built / "target" / LOCK
        deadline = time.monotonic() + 300
        while not lock.is_file():
            assert first.poll() is None and time.monotonic() < deadline, first.stderr.read()
            time.sleep(0.05)
        second = run_cli("generate", "--project-dir", str(built), "--out", str(tmp_path / "b"), *GENERATE_ARGS)
        _refused_by_lock(second, lock, first.pid)
        assert not (tmp_path / "b").exists()
        while not batch.is_dir():  # the gold models are being compiled: kill -9
            assert first.poll() is None and time.monotonic() < deadline, first.stderr.read()
            time.sleep(0.005)
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert batch.is_dir() and lock.is_file()  # what the killed run left
    third = run_cli("generate", "--project-dir", str(built), "--out", str(tmp_path / "c"), *GENERATE_ARGS)
    assert third.returncode == 0, third.stderr
    assert f"took over {lock}" in third.stdout and f"removed {batch}" in third.stdout
    assert not batch.exists() and not lock.exists() and (tmp_path / "c" / "tasks.jsonl").is_file()
    assert any(p.suffix == ".sql" for p in gold.iterdir())  # the new run's gold models


# ---- eval: one run at a time in a run folder -------------------------------------------------------------------------

def test_a_second_eval_into_one_run_folder_is_refused_and_no_task_runs_twice(tmp_path, ollama_server):
    from tests.small_bundle import TASKS, write_bundle

    bundle = write_bundle(tmp_path / "B")
    ollama_server.chat_handler = lambda body: {"delay": 1.5, "content": "<answer>{\"value\": 42}</answer>"}
    out = tmp_path / "run"
    args = [sys.executable, "-m", "dptool.cli", "eval", str(bundle), "--model", "ollama:test-model",
            "--ollama-host", ollama_server.url, "--out", str(out)]
    first = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (out / LOCK).is_file():
            assert first.poll() is None and time.monotonic() < deadline, first.stderr.read()
            time.sleep(0.02)
        second = subprocess.run(args, capture_output=True, text=True, timeout=120)
        _refused_by_lock(second, out / LOCK, first.pid)
        _, err = first.communicate(timeout=120)
        assert first.returncode == 0, err
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    ids = [json.loads(line)["task_id"] for line in (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(ids) == sorted(t["task_id"] for t in TASKS)  # each task once
    assert not (out / LOCK).exists()


# ---- held-out round four (issue 23's "done when") --------------------------------------------------------------

@pytest.mark.parametrize("how", ["DBT_TARGET_PATH", "absolute DBT_TARGET_PATH", "through a symlink", "from inside"])
def test_round_four_the_project_lock_holds_however_the_project_is_named(project, tmp_path, how):
    """$DBT_TARGET_PATH moved the lock with the target folder: a second run with another one wrote into the project
    (models/dptool_gold, the scratch folders are the project's, wherever dbt's artifacts go) while the first ran."""
    link = tmp_path / "link"
    link.symlink_to(project)
    env = {"DBT_TARGET_PATH": "elsewhere"} if how == "DBT_TARGET_PATH" else \
        {"DBT_TARGET_PATH": str(tmp_path / "t2")} if how.startswith("absolute") else None
    where = {"through a symlink": ("--project-dir", str(link)), "from inside": ()}.get(how, ("--project-dir",
                                                                                            str(project)))
    holder = _holder("project", project)
    try:
        proc = run_cli("rule", "new", "late_fee", "--metric", "mrr", *where, env=env,
                       cwd=project if how == "from inside" else None)
        _refused_by_lock(proc, project / "target" / LOCK, holder.pid)
    finally:
        _kill(holder)
    assert not list(project.rglob("*late_fee*")) and not (tmp_path / "t2").exists()
