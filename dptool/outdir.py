"""Folders dptool writes whole (a bundle, link suggestions, a data product's models): replaced only if they are ours.

A folder is written next to its destination and renamed into place, so a failed run leaves the old one as it was.
Replacing deletes the old folder, so dptool first proves it is one it wrote: it holds dptool's marker file for
its kind (or, for folders written before the marker existed, the kind's own signature) and nothing but the names
dptool writes into that kind of folder. An empty folder may be used too. Anything else is refused in one line,
before any work, and so is a destination dptool could not write to.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dptool import __version__
from dptool.errors import DptoolError

MARKER = ".dptool"


@dataclass(frozen=True)
class Kind:
    """A kind of folder dptool writes whole: what it is called, the names it may hold, how an old one looks."""

    name: str  # in the marker and in messages: "benchmark bundle"
    names: tuple[str, ...]  # glob patterns of the entries dptool writes into it
    legacy: Callable[[Path], bool] = lambda _: False  # a folder written before the marker existed


def _starts_with(path: Path, text: str) -> bool:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(len(text)) == text
    except (OSError, UnicodeDecodeError):
        return False


BUNDLE = Kind("benchmark bundle",
              ("tasks.jsonl", "bundle.json", "kb", "warehouse.duckdb", "warehouse.duckdb.wal", "graph.json", "card.md",
               "judge.jsonl", "refresh.md", "refresh.json", "ablation.json", ".*.tmp"),
              lambda p: (p / "tasks.jsonl").is_file() and _starts_with(p / "card.md", "# Benchmark card"))
LINK = Kind("rule-link report", ("*.sql", "report.json", "report.md"),
            lambda p: _starts_with(p / "report.md", "# ") and (p / "report.json").is_file())
DATA_PRODUCT = Kind("data product folder", ("*.sql", "_*.yml", "*.dp.json"),
                    lambda p: any(p.glob("*.dp.json")))


def check_replaceable(out: str | Path, kind: Kind) -> Path:
    """Refuse `out` unless dptool may write it: absent, empty, or a `kind` folder dptool wrote with nothing else.

    Also refuses a destination whose nearest existing parent cannot be written to. Returns `out` resolved.
    """
    out = Path(out).resolve()
    if out.exists() or out.is_symlink():
        if not out.is_dir() or out.is_symlink():
            raise DptoolError(f"{out}: exists and is not a folder; choose another --out")
        entries = sorted(p.name for p in out.iterdir())
        if entries:
            ours = (out / MARKER).is_file() and _marker_kind(out / MARKER) == kind.name
            if not ours and not kind.legacy(out):
                raise DptoolError(f"{out}: not empty and not a {kind.name} dptool wrote (no {MARKER} marker); "
                                  "dptool replaces only its own folders: choose an empty or new --out")
            foreign = [e for e in entries if e != MARKER and not any(fnmatch.fnmatch(e, p) for p in kind.names)]
            if foreign:
                shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
                raise DptoolError(f"{out}: the {kind.name} there also holds files dptool did not write ({shown}); "
                                  "move them out, or choose another --out")
    _check_writable(out.parent)
    return out


def _marker_kind(path: Path) -> str | None:
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("kind")
    except (OSError, ValueError, AttributeError):
        return None


def _check_writable(folder: Path) -> None:
    """A folder can be created under the nearest existing ancestor of `folder` (tried, not guessed)."""
    existing = folder
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise DptoolError(f"{existing}: is a file, so {folder} cannot be created")
    try:
        probe = tempfile.mkdtemp(prefix=".dptool-write-check-", dir=existing)
    except OSError as exc:
        raise DptoolError(f"{existing}: cannot write here ({exc.strerror or exc}); choose another --out") from None
    os.rmdir(probe)


def staging_folder(out: Path) -> Path:
    """A new empty folder beside `out`, to be published with `publish`."""
    out.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))


def publish(tmp: Path, out: Path, kind: Kind) -> Path:
    """Mark `tmp` as a `kind` folder and rename it to `out`, replacing `out` only if dptool may (checked again)."""
    (tmp / MARKER).write_text(json.dumps({"kind": kind.name, "dptool": __version__}) + "\n", encoding="utf-8")
    out = check_replaceable(out, kind)
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        os.rmdir(old)
        out.rename(old)
        tmp.rename(out)
        shutil.rmtree(old)
    else:
        tmp.rename(out)
    return out
