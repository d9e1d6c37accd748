"""A bundle's identity: its fingerprint, and the record of how it was made (`bundle.json`).

The fingerprint is the sha256 of `tasks.jsonl`: every question, gold, tolerance and SQL of the bundle. Answers
files, runs and reports carry it, so an answer is only ever scored against the bundle it was made on. Generate
writes `bundle.json` beside the tasks; evaluate reads it (`dptool score`, `answer`, `eval`, `serve`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from dptool.errors import DptoolError

RECORD = "bundle.json"
SHORT = 12  # hex digits of a fingerprint shown to people


def fingerprint_of(tasks_jsonl: bytes) -> str:
    """The fingerprint of a bundle whose tasks.jsonl holds these bytes."""
    return hashlib.sha256(tasks_jsonl).hexdigest()


def fingerprint(bundle: str | Path) -> str:
    """The fingerprint of the bundle in `bundle` (its tasks.jsonl as it is on disk)."""
    path = Path(bundle) / "tasks.jsonl"
    try:
        return fingerprint_of(path.read_bytes())
    except OSError as exc:
        raise DptoolError(f"{path}: cannot read ({exc.strerror or exc}); expected a bundle written by "
                          "`dptool generate`") from None


def short(fp: str | None) -> str:
    """A fingerprint as people read it."""
    return (fp or "")[:SHORT]


def read_record(bundle: str | Path) -> dict | None:
    """The bundle's bundle.json, or None for a bundle written before it existed."""
    path = Path(bundle) / RECORD
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DptoolError(f"{path}: not readable JSON ({exc}); regenerate the bundle") from None
    if not isinstance(record, dict):
        raise DptoolError(f"{path}: holds {type(record).__name__}, not the record dptool writes; regenerate the bundle")
    return record


def record_text(record: dict, tasks_jsonl: bytes) -> str:
    """bundle.json for a bundle: `record` (how it was made) with the fingerprint and count of its tasks."""
    full = {**record, "fingerprint": fingerprint_of(tasks_jsonl),
            "tasks": sum(1 for line in tasks_jsonl.splitlines() if line.strip())}
    return json.dumps(full, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
