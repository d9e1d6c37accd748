"""Reading what a user hands `dptool score` and `compare`: an answers file (JSONL), or a run folder (its answers.jsonl
and run.json). Every such file is hostile until read: nothing in it may crash the reader, and no count or size in
it decides what is allocated.

- A byte order mark says the encoding: UTF-8, UTF-16 or UTF-32 (what PowerShell's `>` writes) are read; a file of
  NUL bytes without one is refused in one line naming UTF-16.
- An attempt is a whole number from 1 to the most a run may hold (dptool.evaluate.limits.EPOCHS); 1.0 is 1.
- An answer over dptool.answers' size limit is not kept: it is recorded by its size and sha256 (`Oversized`), and
  its line is skimmed, never parsed whole; a line over LINE_BYTES is not read at all (its size and digest said).
- Text no UTF-8 file can hold (a lone surrogate such as "\\ud800", which JSON's escapes can spell) is no task id,
  and makes an answer malformed: it is scored wrong and said so, never written back as it is.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import itertools
import json
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from dptool.answers import DuplicateKeys, Malformed, read_json
from dptool.answers.parse import MAX_ANSWER_BYTES
from dptool.errors import DptoolError
from dptool.evaluate import limits

STATS = ("seconds", "tool_calls", "sql_errors", "prompt_tokens", "completion_tokens")  # of one attempt, where known
LINE_BYTES = 128 * 1_000_000  # a longer line is not read: its size and digest are all that is said of it
MAX_DEPTH = 64  # lists and objects inside one another in an answer
PROBLEMS_LISTED = 100  # problems of an answers file listed one by one; the rest are counted
RUN_JSON_BYTES = 1_000_000  # run.json holds a run's settings: a few hundred bytes


@dataclass(frozen=True)
class Oversized(Malformed):
    """An answer too large to keep: its size in bytes and the sha256 of its JSON text as the file holds it."""

    bytes: int = 0
    sha256: str = ""


@dataclass
class Answers:
    """Answers by task id and attempt (the last line of a (task, attempt) counts), what was wrong with the file,
    and the fingerprints of the bundles its records say they were made on (dptool.bundle).

    `by_task` holds attempt 1 (a record without "attempt" is attempt 1), `later` the attempts after it by
    (task id, attempt); `stats` what a record says of its attempt (seconds, tool calls, SQL errors, tokens);
    `epochs` the attempts per task the run's run.json asks for (None: as many as the answers hold).
    """

    by_task: dict[str, Any]
    problems: list[str]
    bundles: set[str] = field(default_factory=set)
    path: Path | None = None
    later: dict[tuple[str, int], Any] = field(default_factory=dict)
    stats: dict[tuple[str, int], dict] = field(default_factory=dict)
    run: dict = field(default_factory=dict)  # a run folder's run.json: its selection and condition
    epochs: int | None = None
    unlisted: int = 0  # problems beyond PROBLEMS_LISTED, counted

    def say(self, problem: str) -> None:
        """Note a problem of the file; past PROBLEMS_LISTED only counted (a file of a million bad lines would
        otherwise make a report of a million lines)."""
        if len(self.problems) < PROBLEMS_LISTED:
            self.problems.append(problem)
        else:
            self.unlisted += 1

    def has(self, task_id: str, attempt: int) -> bool:
        return task_id in self.by_task if attempt == 1 else (task_id, attempt) in self.later

    def answer(self, task_id: str, attempt: int) -> Any:
        return self.by_task.get(task_id) if attempt == 1 else self.later.get((task_id, attempt))

    def task_ids(self) -> set[str]:
        return set(self.by_task) | {task_id for task_id, _ in self.later}

    def attempts_held(self, task_ids: set[str] | None = None) -> int:
        """The highest attempt number the answers hold (0 when they hold none), of these tasks alone if given:
        a line for a task not scored never sets how many attempts the scored ones have."""
        if task_ids is None:
            return max((a for _, a in self.later), default=1 if self.by_task else 0)
        return max((a for t, a in self.later if t in task_ids),
                   default=1 if any(t in task_ids for t in self.by_task) else 0)

    def only(self, task_ids: set[str]) -> None:
        """Keep the answers of these tasks alone."""
        self.by_task = {k: v for k, v in self.by_task.items() if k in task_ids}
        self.later = {k: v for k, v in self.later.items() if k[0] in task_ids}

    def set_aside(self, bundle_ids: set[str], selected: set[str]) -> None:
        """Drop the answers to tasks of the bundle that are not selected, saying so among the problems: they are
        not scored, but they are no strangers to the bundle either."""
        unselected = sorted((self.task_ids() & bundle_ids) - selected)
        if unselected:
            self.only(self.task_ids() - set(unselected))
            shown = ", ".join(unselected[:5]) + (f" and {len(unselected) - 5} more" if len(unselected) > 5 else "")
            self.problems.append(f"answers for {len(unselected)} task{'s' if len(unselected) > 1 else ''} of the "
                                 f"bundle not selected, not scored: {shown}")


# ---- lines -------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Unread:
    """A line longer than LINE_BYTES."""

    bytes: int
    sha256: str


_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, None),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def _lines(path: Path, f: BinaryIO) -> Iterator[tuple[int, bytes | bytearray | _Unread]]:
    """Each line of the file as UTF-8 bytes (numbered from 1), read as its byte order mark says."""
    head = f.read(4)
    encoding = next(((name, bom) for bom, name in _BOMS if head.startswith(bom)), None)
    if encoding is None and b"\x00" in head + f.read(4096):
        raise DptoolError(f"{path}: holds NUL bytes: UTF-16 or UTF-32 without a byte order mark? save it as UTF-8 "
                          "(or with its byte order mark, as PowerShell writes it)")
    f.seek(len(encoding[1]) if encoding and encoding[0] is None else 0)
    if encoding and encoding[0]:
        text = io.TextIOWrapper(f, encoding=encoding[0], errors="replace", newline="\n")  # lines end as in UTF-8
        pieces = iter(lambda: text.readline(_PIECE).encode("utf-8", "replace"), b"")
    else:
        pieces = iter(lambda: f.readline(_PIECE), b"")
    for i, piece in enumerate(pieces, 1):
        yield i, piece if piece.endswith(b"\n") else _joined(piece, pieces)


_PIECE = 1 << 20  # a line is read in pieces of this many bytes (characters) at most


def _joined(start: bytes, pieces: Iterator[bytes]) -> bytearray | _Unread:
    """The line begun by `start`, read on to its end: whole, or, over LINE_BYTES, only its size and digest."""
    line = bytearray(start)
    for piece in pieces:
        if len(line) + len(piece) > LINE_BYTES:
            digest, size = hashlib.sha256(line), len(line)
            del line
            for part in itertools.chain([piece], pieces):
                digest.update(part)
                size += len(part)
                if part.endswith(b"\n"):
                    break
            return _Unread(size, digest.hexdigest())
        line += piece
        if piece.endswith(b"\n"):
            break
    return line


# ---- a record ----------------------------------------------------------------------------------------------------

_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_COLON = re.compile(rb"\s*:")
_SPACE = re.compile(rb"\s*")
_OPEN, _CLOSE = b"[{", b"]}"


def _skim(line: bytes) -> dict:
    """The top-level keys of a JSON object too long to parse whole: each value of up to MAX_ANSWER_BYTES read, a
    longer "answer" kept as `Oversized`, a longer other value dropped (a transcript). The scan only counts brackets
    and skips strings: what it allocates is a few numbers per bracket, whatever the answer holds."""
    lo, hi = _SPACE.match(line).end(), len(line)
    while hi > lo and line[hi - 1] in b" \t\r\n":
        hi -= 1
    if line[lo:lo + 1] != b"{" or line[hi - 1:hi] != b"}":
        raise ValueError("not a JSON object")
    depth, keys = 0, []  # keys: (name, where the name starts, where its value starts)
    for m in _TOKEN.finditer(line, lo, hi):
        c = line[m.start()]  # not m.group(): a string token may be the whole answer
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
            if depth < 0 or (depth == 0 and m.end() != hi):
                raise ValueError("extra data after JSON")
        elif depth == 1 and m.end() - m.start() <= MAX_ANSWER_BYTES and (colon := _COLON.match(line, m.end())):
            keys.append((m.group(), m.start(), colon.end()))
    if depth != 0:
        raise ValueError("unbalanced brackets")
    record, names = {}, []
    for n, (name, _, start) in enumerate(keys):
        # a value ends at the comma before the next key's name, or at the object's closing brace
        stop = line.rfind(b",", start, keys[n + 1][1]) if n + 1 < len(keys) else hi - 1
        key = read_json(name.decode("utf-8", "replace"))
        names.append(key)
        start = _SPACE.match(line, start).end()
        while stop > start and line[stop - 1] in b" \t\r\n":
            stop -= 1
        if stop - start > MAX_ANSWER_BYTES:
            if key == "answer":  # hashed where it lies: a copy of it is what the limit exists to avoid
                record[key] = Oversized(f"malformed answer: {stop - start:,} bytes, over the {MAX_ANSWER_BYTES:,} an "
                                        "answer may hold (kept by its size and sha256)", stop - start,
                                        hashlib.sha256(memoryview(line)[start:stop]).hexdigest())
            continue
        record[key] = read_json(bytes(line[start:stop]).decode("utf-8", "replace"))
    twice = [k for k, c in Counter(names).items() if c > 1]
    return DuplicateKeys(list(record.items()), twice) if twice else record


def _record(line: bytes | bytearray) -> Any:
    """The line's JSON value; a long line skimmed (a byte order mark or whitespace around it is no part of it)."""
    if len(line) > MAX_ANSWER_BYTES:
        at = _SPACE.match(line).end()
        return _skim(line[at + 3:] if line[at:at + 3] == codecs.BOM_UTF8 else line)
    return read_json(bytes(line).decode("utf-8", "replace").strip().lstrip("\ufeff"))


def _attempt(record: dict) -> int | None:
    """The record's attempt (absent: 1), if it is a whole number from 1 (1.0 too)."""
    attempt = record.get("attempt", 1)
    if isinstance(attempt, float) and math.isfinite(attempt) and attempt.is_integer():
        attempt = int(attempt)
    return attempt if isinstance(attempt, int) and not isinstance(attempt, bool) and attempt >= 1 else None


def _stats(record: dict) -> dict:
    return {k: record[k] for k in STATS if isinstance(record.get(k), int | float) and not isinstance(record[k], bool)
            and math.isfinite(record[k]) and record[k] >= 0}


_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(value: Any) -> str | None:
    """The first lone surrogate in any text of `value` (keys too), as its escape "\\ud800", or None."""
    stack = [value]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            m = _SURROGATE.search(x)
            if m:
                return f"\\u{ord(m.group()):04x}"
        elif isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return None


def too_deep(value: Any) -> bool:
    """Whether `value` nests lists and objects deeper than MAX_DEPTH (no answer format is more than a few deep;
    what is, every writer and reader of it would have to recurse through)."""
    stack = [(value, 0)]
    while stack:
        x, depth = stack.pop()
        if isinstance(x, dict | list):
            if depth >= MAX_DEPTH:
                return True
            stack.extend((v, depth + 1) for v in (x.values() if isinstance(x, dict) else x))
    return False


def load_answers(path: str | Path) -> Answers:
    """Read an answers file: JSONL of {"task_id": ..., "attempt": 1-based (absent: 1), "answer": JSON or text,
    "transcript": optional, and optional stats: seconds, tool_calls, sql_errors, prompt_tokens, completion_tokens}.

    A byte order mark is no part of the first line. A key twice in any object of an answer makes that answer
    malformed, and "answer" twice in a record too: json's last-wins would pick one of two claims. A line that
    cannot be read is a problem of the file, said by its number; the others are scored.
    """
    path = Path(path)
    if not path.is_file():
        raise DptoolError(f"{path}: answers file not found")
    answers = Answers({}, [], set(), path)
    most = limits.EPOCHS[1]
    try:
        with open(path, "rb") as f:
            for i, raw in _lines(path, f):
                if isinstance(raw, _Unread):
                    answers.say(f"line {i}: {raw.bytes:,} bytes, over the {LINE_BYTES:,} a line may "
                                            f"hold; not read (sha256 {raw.sha256})")
                    continue
                # a blank line is none; a file glued from several has byte order marks inside
                if _SPACE.match(raw).end() < len(raw) and (len(raw) > 8 or raw.strip() != codecs.BOM_UTF8):
                    _read_line(answers, i, raw, most)
    except OSError as exc:
        raise DptoolError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if answers.unlisted:
        answers.problems.append(f"{answers.unlisted:,} more lines with problems, not listed")
    return answers


def _shown(text: str, chars: int = 60) -> str:
    return text if len(text) <= chars else text[:chars] + "…"


def _read_line(answers: Answers, i: int, line: bytes, most: int) -> None:
    if len(line) <= MAX_ANSWER_BYTES and not line.isascii():
        try:
            bytes(line).decode("utf-8")
        except UnicodeDecodeError as exc:  # a file saved as Windows-1252, Latin-1, ...: said, then read
            answers.say(f"line {i}: not UTF-8 at byte {exc.start + 1} (read with \ufffd in its place; save the file "
                        "as UTF-8)")
    try:
        record = _record(line)
    except (ValueError, RecursionError):
        answers.say(f"line {i}: not JSON")
        return
    twice = record.keys_twice if isinstance(record, DuplicateKeys) else ()
    if "task_id" in twice or "attempt" in twice:
        answers.say(f"line {i}: the key {'task_id' if 'task_id' in twice else 'attempt'!r} twice")
        return
    if not isinstance(record, dict) or not isinstance(record.get("task_id"), str):
        answers.say(f"line {i}: no task_id")
        return
    task_id, answer, attempt = record["task_id"], record.get("answer"), _attempt(record)
    bad = lone_surrogate(task_id)
    if bad:
        answers.say(f"line {i}: the task id holds {bad}, half a character no file can hold (the line is "
                                "not scored)")
        return
    if attempt is None:
        answers.say(f"line {i}: attempt {_shown(json.dumps(record.get('attempt')))} is not a whole number from 1 "
                                "(the line is not scored)")
        return
    if attempt > most:
        answers.say(f"line {i}: attempt {_shown(str(attempt))} is beyond the {most} attempts a run may hold (the line "
                                "is not scored)")
        return
    if isinstance(record.get("bundle"), str) and not lone_surrogate(record["bundle"]):
        answers.bundles.add(record["bundle"])
    if "answer" in twice:
        answers.say(f"line {i}: the key 'answer' twice (the answer is malformed)")
        answer = Malformed("malformed answer: the key 'answer' twice in its record")
    elif too_deep(answer):
        answers.say(f"line {i}: the answer nests lists or objects more than {MAX_DEPTH} deep (the answer is "
                    "malformed)")
        answer = Malformed(f"malformed answer: lists or objects nested more than {MAX_DEPTH} deep")
    elif (bad := lone_surrogate(answer)) is not None:
        answers.say(f"line {i}: the answer holds {bad}, half a character no file can hold (the answer "
                                "is malformed)")
        answer = Malformed(f"malformed answer: it holds {bad}, half a character no file can hold")
    if answers.has(task_id, attempt):
        which = "" if attempt == 1 else f", attempt {attempt}"
        answers.say(f"line {i}: a second answer for {_shown(task_id)}{which} (the last one counts)")
    if attempt == 1:
        answers.by_task[task_id] = answer
    else:
        answers.later[(task_id, attempt)] = answer
    answers.stats[(task_id, attempt)] = _stats(record)


# ---- a run folder ------------------------------------------------------------------------------------------------

def read_run_json(path: Path) -> dict:
    """A run folder's run.json: a JSON object, its epochs (absent: 1) a whole number a run may hold. One line
    naming the file and the key otherwise."""
    try:
        with open(path, "rb") as f:
            data = f.read(RUN_JSON_BYTES + 1)
    except OSError as exc:
        raise DptoolError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if len(data) > RUN_JSON_BYTES:
        raise DptoolError(f"{path}: over {RUN_JSON_BYTES:,} bytes; it is the run's settings, written by dptool")
    try:
        settings = json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError):
        raise DptoolError(f"{path}: not JSON; it is the run's settings, written by dptool") from None
    if not isinstance(settings, dict):
        raise DptoolError(f"{path}: holds a JSON {type(settings).__name__}, not the object of a run's settings dptool "
                          "writes")
    _check_selection(path, settings.get("selection"))
    epochs = settings.get("epochs", 1)
    if isinstance(epochs, float) and math.isfinite(epochs) and epochs.is_integer():
        epochs = int(epochs)
    low, high = limits.EPOCHS
    if not isinstance(epochs, int) or isinstance(epochs, bool) or not low <= epochs <= high:
        raise DptoolError(f"{path}: epochs is {json.dumps(epochs)[:40]}; expected a whole number from {low} to {high} "
                          "(the attempts per task)")
    return {**settings, "epochs": epochs}


_NAMES = ("tasks", "types", "domains", "tiers")  # the selection run.json records (dptool.evaluate.select)


def _check_selection(path: Path, selection: Any) -> None:
    """run.json's selection: absent, or a mapping whose names are lists of text and sample and seed whole numbers."""
    if selection is None:
        return
    if not isinstance(selection, dict):
        raise DptoolError(f"{path}: selection is {_shown(json.dumps(selection))}; expected the mapping dptool writes "
                          "(tasks, types, domains, tiers, sample, seed)")
    for key, value in selection.items():
        names = key in _NAMES and not (isinstance(value, list) and all(isinstance(v, str) for v in value))
        count = key in ("sample", "seed") and not (value is None and key == "sample") and (
            not isinstance(value, int) or isinstance(value, bool) or value < (1 if key == "sample" else 0))
        if names or count:
            expected = "a list of names" if names else "a whole number" + (" from 1" if key == "sample" else "")
            raise DptoolError(f"{path}: selection.{key} is {_shown(json.dumps(value))}; expected {expected}")


def load_run(path: str | Path) -> Answers:
    """An answers file, or a run folder (its answers.jsonl, and run.json's bundle fingerprint and epochs)."""
    path = Path(path)
    if not path.is_dir():
        return load_answers(path)
    answers = load_answers(path / "answers.jsonl")
    run = path / "run.json"
    if run.is_file():
        settings = read_run_json(run)
        answers.run = settings
        fp = settings.get("bundle") or settings.get("tasks_sha256")
        if isinstance(fp, str) and fp:
            answers.bundles.add(fp)
        answers.epochs = settings["epochs"]
    return answers
