"""Progress of a long stage: click's bar on a terminal, and in a log or CI (no TTY) a line at least every 10 s.

click draws no bar where its output is not a terminal: it writes the label once, then nothing until the stage ends,
so a log shows minutes of silence. There a timer writes `label: done/total (share), elapsed` every `EVERY` seconds
while the stage runs, and once when it ends.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import click

EVERY = 10.0  # seconds between two lines in a log


class LogBar:
    """What click's bar offers a stage (update, iteration), written as timed lines."""

    def __init__(self, length: int, label: str, file, every: float = EVERY, iterable: Iterable | None = None):
        self.length, self.label, self.file, self.every = length, label.strip(), file, every
        self.iterable = iterable
        self.done = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._start = time.monotonic()
        self._thread = threading.Thread(target=self._tick, daemon=True)

    def update(self, n: int = 1, *_args) -> None:
        with self._lock:
            self.done += n

    def __iter__(self) -> Iterator:
        for item in self.iterable or ():
            yield item
            self.update(1)

    def line(self) -> str:
        with self._lock:
            done = self.done
        share = f" ({100 * done // self.length}%)" if self.length else ""
        return f"  {self.label}: {done}/{self.length}{share}, {time.monotonic() - self._start:.0f} s"

    def _tick(self) -> None:
        while not self._stop.wait(self.every):
            self._write(self.line())

    def _write(self, text: str) -> None:
        try:
            self.file.write(text + "\n")
            self.file.flush()
        except (OSError, ValueError):  # a closed log is no reason to stop the stage
            pass

    def start(self) -> LogBar:
        self._thread.start()
        return self

    def finish(self, last: bool = True) -> None:
        """Stop the timer; with `last`, write where the stage ended (not when it failed or was interrupted: the
        error is the last line then)."""
        self._stop.set()
        self._thread.join()
        if last:
            self._write(self.line())


@contextmanager
def progressbar(iterable: Iterable | None = None, *, length: int | None = None, label: str = "", file=None,
                every: float = EVERY) -> Iterator:
    """click.progressbar where `file` (stdout when None) is a terminal; a LogBar where it is not; a file without
    `isatty` (a null sink: progress off) gets click's bar, which writes nothing to it."""
    out = sys.stdout if file is None else file
    if length is None:
        length = len(iterable) if hasattr(iterable, "__len__") else 0
    isatty = getattr(out, "isatty", None)
    if isatty is None or isatty():
        with click.progressbar(iterable, length=length if iterable is None else None, label=label,
                               file=file) as bar:
            yield bar
        return
    bar = LogBar(length, label, out, every, iterable).start()
    try:
        yield bar
    except BaseException:
        bar.finish(last=False)
        raise
    bar.finish()


class _Beat(LogBar):
    def line(self) -> str:
        return f"  {self.label}: running, {time.monotonic() - self._start:.0f} s"


@contextmanager
def heartbeat(label: str, *, file=None, every: float = EVERY) -> Iterator[None]:
    """A stage with no count to show (a dbt command): in a log or CI (no TTY) a line `label: running, N s` at least
    every `every` seconds while it runs, and one when it ends; on a terminal nothing (dbt prints its own)."""
    out = sys.stdout if file is None else file
    isatty = getattr(out, "isatty", None)
    if isatty is None or isatty():
        yield
        return
    beat = _Beat(0, label, out, every).start()
    try:
        yield
    except BaseException:
        beat.finish(last=False)
        raise
    beat.finish()
