"""One dptool run at a time where runs would corrupt each other: a dbt project, an eval run folder.

The lock is a file (`<target>/dptool.lock` in a project, `dptool.lock` in a run folder) locked with flock and
holding the pid and command of its holder. A second run refuses in one line naming the file and that pid. The
kernel lets go of a flock when its process ends however it ends, so a lock left by a run killed outright is free:
the next run takes it over, says so, and removes the scratch folders such a run leaves in a project (models
dptool writes only while it holds the lock). Within one process the lock is re-entrant (the CLI and the pipeline
may both take it).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from dptool.errors import DptoolError

LOCK = "dptool.lock"
# folders a run writes in a project only while it holds the lock, with the names of the files it writes there:
# found when the lock is taken, a killed run left them (dbt would parse them as the user's models).
# They are dptool.project.batch.BATCH_DIR, dptool.generate.ablate.FOLDER and link's TMP_FOLDER (a test checks they
# agree), named here so that every command can take the lock without importing what writes them.
SCRATCH: tuple[tuple[Path, tuple[str, ...]], ...] = (
    (Path("models") / "dptool_batch", ("batch_",)),
    (Path("models") / "dptool_ablation", ("a_",)),
    (Path("models") / "dptool_link_tmp", ("dptool_link_",)),
    (Path("macros") / "dptool_link_tmp", ("rule__dptool_link_",)),
)
_held: dict[Path, int] = {}  # lock file -> how many times this process holds it


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _holder(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _acquire(path: Path, what: str) -> tuple[int, dict]:
    """Lock `path` (fd, and what the file said of an earlier holder), or DptoolError naming the holder."""
    try:
        import fcntl
    except ImportError:  # Windows: no flock; the pid in the file decides
        fcntl = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DptoolError(f"{path}: cannot create the {what} lock ({exc.strerror or exc})") from None
    for _ in range(20):  # a holder that lets go while we look replaces the file: look again
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise DptoolError(f"{path}: cannot create the {what} lock ({exc.strerror or exc})") from None
        before = _holder(path)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            elif before.get("pid") and before["pid"] != os.getpid() and _alive(int(before["pid"])):
                raise BlockingIOError
        except BlockingIOError:
            os.close(fd)
            holder = _holder(path) or before
            pid = holder.get("pid", "?")
            command = f", `{holder['command']}`" if holder.get("command") else ""
            raise DptoolError(f"{path}: another dptool run holds the {what} lock (pid {pid}{command}); wait for it to "
                              "end, or stop it") from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd, _holder(path)
        os.close(fd)
    raise DptoolError(f"{path}: the {what} lock keeps changing hands; try again")


@contextmanager
def hold(path: str | Path, command: str, what: str, echo: Callable[[str], None] = print,
         on_taken: Callable[[], None] | None = None) -> Iterator[None]:
    """Run the block holding the lock file `path` (see the module docstring); `command` is what the file says
    holds it, `what` names the thing locked in messages ("project", "run folder"); `on_taken` runs once the lock
    is taken (not again when this process takes it again)."""
    path = Path(os.path.abspath(path))
    if _held.get(path):
        _held[path] += 1
        try:
            yield
        finally:
            _held[path] -= 1
        return
    made = not path.parent.exists()  # a project not yet built has no target folder: none is left behind either
    fd, earlier = _acquire(path, what)
    try:
        if earlier.get("pid") and earlier["pid"] != os.getpid():
            echo(f"  note: took over {path}: the run that left it (pid {earlier['pid']}"
                 f"{', `' + earlier['command'] + '`' if earlier.get('command') else ''}) is no longer running")
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, (json.dumps({"pid": os.getpid(), "command": command, "since": round(time.time())}) + "\n")
                 .encode("utf-8"))
        _held[path] = 1
        if on_taken is not None:
            on_taken()
        try:
            yield
        finally:
            del _held[path]
            path.unlink(missing_ok=True)  # before the flock goes: the next run finds no holder to report
            if made:
                with contextlib.suppress(OSError):  # not empty: the run wrote there
                    path.parent.rmdir()
    finally:
        os.close(fd)


def project_lock(project_dir: str | Path, command: str, echo: Callable[[str], None] = print):
    """`hold` the project's lock (in its dbt target folder); the scratch folders a killed run left are removed once
    it is taken. Outside a dbt project there is nothing to lock: the command says what is wrong itself."""
    if not (Path(project_dir) / "dbt_project.yml").is_file():
        return nullcontext()
    from dptool.project.dbt import DbtProject, _project_yml

    root = DbtProject(project_dir).project_dir
    # the project's own target folder, whatever $DBT_TARGET_PATH says: two runs with another DBT_TARGET_PATH each
    # still share the project's models/ (models/dptool_gold, the scratch folders), so they share one lock
    target = root / str(_project_yml(root).get("target-path") or "target")
    return hold(target / LOCK, command, "project", echo, on_taken=lambda: clear_scratch(root, echo))


def clear_scratch(root: Path, echo: Callable[[str], None] = print) -> None:
    """Remove the scratch folders of SCRATCH a killed run left in the project; a file in one that dptool does not
    write there is left, with a note."""
    for rel, prefixes in SCRATCH:
        folder = root / rel
        if not folder.is_dir():
            continue
        others = [p for p in folder.rglob("*") if p.is_file() and not (p.name.startswith(prefixes)
                                                                        and p.suffix in (".sql", ".yml"))]
        if others:
            echo(f"  note: {folder} holds files dptool did not write ({others[0].name}); left as it is")
            continue
        shutil.rmtree(folder, ignore_errors=True)
        echo(f"  note: removed {folder}, which a killed run left")
