"""Whether a bundle on disk is still the one a server started on: its tasks.jsonl and warehouse.duckdb."""

from __future__ import annotations

import os
from pathlib import Path

from dptool.bundle import fingerprint

WATCHED = ("tasks.jsonl", "warehouse.duckdb")


def _stamp(path: Path) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


class BundleWatch:
    """`changed()` is cheap (a stat per file); the tasks' fingerprint is recomputed only when their file's stat moved,
    so a file touched but not changed is no change."""

    def __init__(self, bundle: Path, tasks_fingerprint: str):
        self.bundle = bundle
        self.fingerprint = tasks_fingerprint
        self.stamps = {name: _stamp(bundle / name) for name in WATCHED}

    def changed(self) -> str | None:
        """The name of the bundle file that changed since the start, or None."""
        for name in WATCHED:
            now = _stamp(self.bundle / name)
            if now == self.stamps[name]:
                continue
            if name == "tasks.jsonl" and now is not None:
                try:
                    same = fingerprint(self.bundle) == self.fingerprint
                except Exception:  # noqa: BLE001 - unreadable is changed
                    same = False
                if same:
                    self.stamps[name] = now
                    continue
            return name
        return None
