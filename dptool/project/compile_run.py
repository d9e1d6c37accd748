"""Model texts compiled by dbt and their SQL run, the two overlapped where the target allows it.

Rendering is dbt's work on one core; a DuckDB query runs outside Python's lock. On a DuckDB file whose warehouse
keeps its shared CTEs, each batch's queries start the moment dbt has written the batch, while dbt renders the next
ones: the CTE tables an earlier batch made are read by the later ones, so nothing is computed twice. Another
target (one dbt adapter, not for two threads at once) runs the queries after the compile, as one `query_shared`.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import Future

from dptool.errors import DptoolError
from dptool.project.batch import Compiled, compile_texts
from dptool.project.dbt import DbtProject
from dptool.project.warehouse import Warehouse


class Ran:
    """What `compiled_and_run` gives: every text's Compiled, and the columns and rows (or DptoolError) of each query
    it ran, by name."""

    def __init__(self, compiled: dict[str, Compiled], result: Callable[[str], object]):
        self.compiled = compiled
        self._result = result

    def result(self, name: str):
        """The query's columns and rows, or its DptoolError; waits for it if it still runs."""
        return self._result(name)


@contextlib.contextmanager
def compiled_and_run(project: DbtProject, texts: dict[str, str], warehouse, run: Collection[str],
                     on_batch_done: Callable[[int], None] | None = None) -> Iterator[Ran]:
    """Compile `texts` in one `dbt compile` (`compile_texts`) and run on `warehouse` the SQL of each text named in
    `run` that compiled. Leaving the block (an error, a Ctrl-C) stops the queries still running."""
    early = isinstance(warehouse, Warehouse) and warehouse.keeps_shared
    futures: dict[str, Future] = {}
    batches: queue.SimpleQueue = queue.SimpleQueue()
    stopped = threading.Event()
    runner = threading.Thread(target=_run_batches, args=(warehouse, batches, stopped), name="dptool-compiled-sql")

    def compiled_batch(found: dict[str, Compiled]) -> None:
        batch = [(n, c.query, futures.setdefault(n, Future())) for n, c in found.items()
                 if n in run and c.sql is not None]
        if batch:
            batches.put(batch)

    if early:
        runner.start()
    try:
        compiled = compile_texts(project, texts, on_batch_done, on_compiled=compiled_batch if early else None)
        if early:
            batches.put(None)  # the runner ends after the last batch
            yield Ran(compiled, lambda name: futures[name].result())
            return
        names = [n for n in texts if n in run and compiled[n].sql is not None]
        with contextlib.closing(warehouse.query_shared(compiled[n].query for n in names)) as results:
            found: dict[str, object] = {}
            pairs = zip(names, results, strict=True)

            def result(name: str):
                while name not in found:
                    n, r = next(pairs)
                    found[n] = r
                return found.pop(name)

            yield Ran(compiled, result)
    finally:
        if early:
            stopped.set()
            batches.put(None)
            while runner.is_alive():  # a batch that starts after one interrupt meets the next
                warehouse.interrupt()
                runner.join(0.05)


def _run_batches(warehouse: Warehouse, batches: queue.SimpleQueue, stopped: threading.Event) -> None:
    """Run each batch put in `batches` (until None), setting each query's future to its rows or error."""
    while (batch := batches.get()) is not None:
        try:
            if stopped.is_set():
                raise DptoolError(f"{warehouse.path}: query interrupted")
            with contextlib.closing(warehouse.query_shared(q for _, q, _ in batch)) as results:
                for (_, _, future), result in zip(batch, results, strict=True):
                    future.set_result(result)
        except BaseException as exc:  # noqa: BLE001 - each query's caller gets it
            for _, _, future in batch:
                if not future.done():
                    future.set_exception(exc)
