"""The ranges of the agent's tool limits, checked by the CLI's options and by the sandbox itself (a light module:
every dptool command imports it).

Beyond these a limit is no limit (a timeout of 1e10 s) or overflows what enforces it (a timer, an rlimit).
"""

from __future__ import annotations

import math

TIMEOUT = (0.01, 3600.0)  # seconds a run_sql query may take
MEMORY_MB = (64, 1_048_576)  # megabytes a run_sql query may use
MAX_ROWS = (1, 10_000)  # rows run_sql returns at most (its output is cut at 20,000 characters anyway)
# attempts per task: `--epochs`, a run.json's epochs, an answers file's "attempt" (a run's to-do list and a score's
# table hold epochs × tasks: an attempt of 3,000,000 on one line filled the memory)
EPOCHS = (1, 100)


def out_of_range(name: str, value, bounds: tuple) -> str | None:
    """Why `value` is no valid `name` (not a finite number, or outside `bounds`), or None."""
    low, high = bounds
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return f"{name} is {value!r}: not a finite number"
    if not low <= value <= high:
        return f"{name} is {value!r}: expected {low:g} to {high:g}"
    return None
