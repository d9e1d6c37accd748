"""Where the demo generators' rows go: straight into one CSV writer per table, so no table is held in memory.

A table whose file order is not the order its rows are drawn in (Berka's transactions: drawn account by
account, filed by date) is spilled into bucket files first, then each bucket is sorted alone and appended:
memory holds one bucket, not the table.
"""

from __future__ import annotations

import csv
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

Emit = Callable[[str, dict], None]


def _writer(f: IO[str]):
    return csv.writer(f, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)


class CsvSink:
    """One CSV per table (header row, UTF-8, '\\n' line endings, minimal quoting); `counts` rows per table.

    `files`: table -> (file name, columns). `buckets`: table -> (bucket of a row, sort key of a written line):
    that table's rows are written bucket after bucket in bucket order, each bucket's lines in key order.
    """

    def __init__(self, out: Path, files: dict[str, tuple[str, tuple[str, ...]]],
                 buckets: dict[str, tuple[Callable[[dict], str], Callable[[str], tuple]]] | None = None):
        self.out, self.files, self.buckets = out, files, buckets or {}
        self.counts = {table: 0 for table in files}
        self._handles: dict[str, IO[str]] = {}
        self._writers: dict[str, object] = {}
        self._spill: dict[str, dict[str, tuple[IO[str], object]]] = {t: {} for t in self.buckets}
        self._tmp: tempfile.TemporaryDirectory | None = None

    def __enter__(self) -> CsvSink:
        for table, (name, columns) in self.files.items():
            f = open(self.out / name, "w", encoding="utf-8", newline="")
            self._handles[table] = f
            self._writers[table] = _writer(f)
            self._writers[table].writerow(columns)
        if self.buckets:
            self._tmp = tempfile.TemporaryDirectory(dir=self.out, prefix=".buckets-")
        return self

    def emit(self, table: str, row: dict) -> None:
        values = [row[c] for c in self.files[table][1]]
        self.counts[table] += 1
        if table not in self.buckets:
            self._writers[table].writerow(values)
            return
        bucket = self.buckets[table][0](row)
        spill = self._spill[table].get(bucket)
        if spill is None:
            path = Path(self._tmp.name) / f"{table}-{len(self._spill[table])}"
            f = open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115 (open until __exit__ sorts it)
            spill = self._spill[table][bucket] = (f, _writer(f))
        spill[1].writerow(values)

    def __exit__(self, exc_type, *exc) -> None:
        try:
            if exc_type is None:
                for table, spills in self._spill.items():
                    key = self.buckets[table][1]
                    for bucket in sorted(spills):
                        f = spills[bucket][0]
                        f.close()
                        with open(f.name, encoding="utf-8", newline="") as spilled:
                            lines = spilled.readlines()
                        lines.sort(key=key)
                        self._handles[table].writelines(lines)
                        Path(f.name).unlink()
        finally:
            for spills in self._spill.values():
                for f, _ in spills.values():
                    f.close()
            for f in self._handles.values():
                f.close()
            if self._tmp is not None:
                self._tmp.cleanup()
