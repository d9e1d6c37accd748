"""A served run's folder as the single source of truth, shared by every server process on it.

Several processes may serve one folder at once (a stdio server per tool call, several servers on one `--out`), so
no process keeps the run's state in memory: each change is made holding an exclusive `flock` on
transcripts/attempts.jsonl, the ledger of attempts handed out, reopened and answered, after reading it afresh.
`flock` rather than a claim file made with O_CREAT|O_EXCL: the kernel drops the lock when its holder dies, so a
killed server never leaves a stale lock behind, and one lock orders the ledger, the call logs and answers.jsonl alike.

Each attempt's calls are appended, one JSON line each, to transcripts/<task>-<attempt>.calls.jsonl (never a rewrite);
an argument or a reply over OVERSIZED characters is kept as its size and sha256 digest. When the attempt is answered,
its transcript transcripts/<task>-<attempt>.json is written once, whole, then its line is appended to answers.jsonl.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dptool.errors import DptoolError
from dptool.files.names import file_name
from dptool.outdir import write_text_atomic as write_atomic

LEDGER = "attempts.jsonl"
OUTSIDE = "outside-tasks.jsonl"
OVERSIZED = 64 * 1024  # characters of one argument or reply kept whole in a call log


def answered(answers: Path) -> set[tuple[str, int]]:
    """The (task_id, attempt) pairs an answers file holds; a line cut by an interruption does not count."""
    return _pairs(answers.read_text(encoding="utf-8", errors="replace")) if answers.is_file() else set()


def _pairs(text: str) -> set[tuple[str, int]]:
    done = set()
    for line in text.splitlines():
        try:
            record = json.loads(line)
            done.add((record["task_id"], int(record.get("attempt", 1))))
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
    return done


def prepare_run_folder(out: Path, settings: dict) -> None:
    """Create OUT/run.json, or check that the run already in OUT has the same settings (then it is resumed)."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "run.json"
    if path.is_file():
        try:
            theirs = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            raise DptoolError(f"{path}: not JSON; it is the run's settings, written by dptool") from None
        if not isinstance(theirs, dict):
            raise DptoolError(f"{path}: holds {type(theirs).__name__}, not the run's settings dptool writes")
        differ = sorted(k for k in settings.keys() | theirs.keys() if settings.get(k) != theirs.get(k))
        if differ:
            k = differ[0]
            raise DptoolError(f"{out}: holds a run with {k} = {json.dumps(theirs.get(k))}, not "
                              f"{json.dumps(settings.get(k))}; start it with the same settings to resume, or choose "
                              "another --out")
    elif (out / "answers.jsonl").is_file():
        raise DptoolError(f"{out}: holds answers.jsonl but no run.json (not a run dptool wrote); choose another --out")
    else:
        write_atomic(path, json.dumps(settings, indent=2, sort_keys=True) + "\n")


def process_token(pid: int | None = None) -> str | None:
    """pid@start-time of a process (None when it is gone): a pid alone may be reused by another process."""
    pid = os.getpid() if pid is None else pid
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return f"{pid}@{stat.rsplit(')', 1)[1].split()[19]}"  # field 22, counted after the command's parenthesis


def alive(token: str) -> bool:
    """Whether the process a token names still runs."""
    pid, _, _ = token.partition("@")
    return pid.isdigit() and process_token(int(pid)) == token


def digest(value: Any) -> Any:
    """`value` as a call log keeps it: whole, or {"oversized": {chars, sha256}} when its JSON is over OVERSIZED."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= OVERSIZED:
        return value
    data = text.encode("utf-8", "surrogatepass")
    return {"oversized": {"chars": len(text), "sha256": hashlib.sha256(data).hexdigest()}}


def shrink_arguments(arguments: Any) -> Any:
    """A call's arguments with each oversized value (or the whole, when not an object) replaced by its digest."""
    if isinstance(arguments, dict):
        return {k: digest(v) for k, v in arguments.items()}
    return digest(arguments)


def json_line(record: dict) -> str:
    """One JSON line; text that cannot be encoded (a lone surrogate) is escaped rather than refused."""
    return json.dumps(record, sort_keys=True, ensure_ascii=True, default=str) + "\n"


@dataclass
class Claim:
    """One attempt handed out: its handle, whose open attempt it is (`holder`), by which process, when."""

    id: str
    task_id: str
    attempt: int
    holder: str | None
    process: str
    at: float
    answered_at: float | None = None

    @property
    def name(self) -> str:
        """The attempt's file stem in transcripts/: the task id as a file name that stays in its folder."""
        return f"{file_name(self.task_id)}-{self.attempt}"


class Ledger:
    """The attempts of the run as the folder holds them: `refresh` (under the folder's lock) reads what was appended
    to the ledger and to answers.jsonl since the last time, by any process; `add` appends an event. Both files only
    grow, so a long run costs each call only its own new lines."""

    def __init__(self, folder: RunFolder):
        self.folder = folder
        self._file = None
        self._reset()
        self.answered: set[tuple[str, int]] = set()
        self._answers_at: tuple[int | None, int] = (None, 0)  # (inode, bytes read) of answers.jsonl

    def _reset(self) -> None:
        self.claims: dict[str, Claim] = {}
        self.by_pair: dict[tuple[str, int], Claim] = {}
        self._at: tuple[int | None, int] = (None, 0)  # (inode, bytes read) of the ledger
        self._cut = False

    def refresh(self, file) -> Ledger:
        self._file = file
        st = os.fstat(file.fileno())
        if st.st_ino != self._at[0] or st.st_size < self._at[1]:  # another file in its place: read it whole
            self._reset()
        file.seek(self._at[1])
        data = file.read()
        whole = data.rfind(b"\n") + 1
        for line in data[:whole].decode("utf-8", "replace").splitlines():
            try:
                self._apply(json.loads(line))
            except (ValueError, KeyError, TypeError, AttributeError):
                continue  # a line cut by a kill: the event did not happen
        self._at = (st.st_ino, self._at[1] + whole)
        self._cut = whole < len(data)
        self._read_answers()
        return self

    def _read_answers(self) -> None:
        try:
            st = os.stat(self.folder.answers)
        except OSError:
            self.answered, self._answers_at = set(), (None, 0)
            return
        inode, done = self._answers_at
        if st.st_ino != inode or st.st_size < done:
            self.answered, done = set(), 0
        with open(self.folder.answers, "rb") as f:
            f.seek(done)
            data = f.read()
        whole = data.rfind(b"\n") + 1
        self.answered |= _pairs(data[:whole].decode("utf-8", "replace"))
        self._answers_at = (st.st_ino, done + whole)

    def _apply(self, event: dict) -> None:
        kind = event["event"]
        if kind == "claim":
            claim = Claim(event["id"], event["task_id"], int(event["attempt"]), event.get("holder"),
                          event["process"], float(event["at"]))
            self.claims[claim.id] = claim
            self.by_pair[(claim.task_id, claim.attempt)] = claim
        elif kind == "reopen":
            claim = self.claims[event["id"]]
            claim.holder, claim.process = event.get("holder"), event["process"]
        elif kind == "answer":
            self.claims[event["id"]].answered_at = float(event["at"])

    def add(self, event: dict) -> None:
        line = json_line(event).encode("utf-8")
        if self._cut:  # a line cut by a killed writer: ours starts a line of its own
            line = b"\n" + line
            self._cut = False
        self._file.write(line)
        self._file.flush()
        self._at = (self._at[0], self._file.tell())
        self._apply(event)

    def is_answered(self, claim: Claim) -> bool:
        return claim.answered_at is not None or (claim.task_id, claim.attempt) in self.answered

    def open_claims(self) -> list[Claim]:
        return [c for c in self.claims.values() if not self.is_answered(c)]


class RunFolder:
    """The files of a served run: answers.jsonl, the ledger, each attempt's call log and transcript."""

    def __init__(self, out: Path):
        self.out = out
        self.transcripts = out / "transcripts"
        self.transcripts.mkdir(exist_ok=True)
        self.answers = out / "answers.jsonl"
        self._ledger = Ledger(self)
        self._threads = threading.Lock()  # the cached ledger is one per process: one thread reads it at a time

    @contextlib.contextmanager
    def locked(self) -> Iterator[Ledger]:
        """The ledger, read holding the folder's lock, which is kept until the block ends."""
        with self._threads, open(self.transcripts / LEDGER, "a+b") as f:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)
            try:
                yield self._ledger.refresh(f)
            finally:
                fcntl.flock(f.fileno(), fcntl.LOCK_UN)

    def call_log(self, claim: Claim) -> Path:
        return self.transcripts / f"{claim.name}.calls.jsonl"

    def append(self, path: Path, record: dict) -> None:
        """Append one line (the caller holds the lock)."""
        with open(path, "a", encoding="utf-8", newline="\n") as f:
            f.write(json_line(record))

    def calls(self, claim: Claim) -> list[dict]:
        path = self.call_log(claim)
        if not path.is_file():
            return []
        out = []
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
        return out
