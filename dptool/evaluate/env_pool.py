"""One `Environment` per open attempt, so that agents sharing a server run their queries side by side.

Each environment has its own sandbox (a SQL worker process) and SQL session, and reads its attempt's domain's kb;
all share one `Knowledge`, read once. At most `limit` environments live at once (each is a process holding the
warehouse open): past it, the least recently used idle one passes to the attempt that needs one, and its next
query starts on a fresh SQL session.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Iterator

from dptool.evaluate.environment import Environment

MAX_ENVIRONMENTS = 8  # live sandboxes per server: 2 cores run no more than that many queries usefully


class EnvironmentPool:
    """Environments by attempt handle (None: calls made outside every attempt)."""

    def __init__(self, base: Environment, limit: int = MAX_ENVIRONMENTS):
        self.base = base
        self.limit = max(1, limit)
        self._free: list[Environment] = [base]
        self._bound: OrderedDict[str | None, Environment] = OrderedDict()
        self._busy: dict[int, int] = {}
        self._made = 1
        self._cond = threading.Condition()

    @property
    def live(self) -> int:
        """How many environments there are (the base one included)."""
        return self._made

    @contextlib.contextmanager
    def use(self, key: str | None, domain: str | None) -> Iterator[Environment]:
        """The environment of attempt `key`, reading the kb of `domain`, held for one call."""
        env = self._take(key, domain)
        try:
            yield env
        finally:
            with self._cond:
                self._busy[id(env)] -= 1
                self._cond.notify_all()

    def _take(self, key: str | None, domain: str | None) -> Environment:
        with self._cond:
            while True:
                env = self._bound.get(key)
                if env is not None:
                    self._bound.move_to_end(key)
                    break
                if self._free:
                    env = self._free.pop()
                elif self._made < self.limit:
                    self._made += 1  # the slot is taken now; the sandbox starts outside the lock
                    env = None
                else:
                    idle = next((k for k, e in self._bound.items() if not self._busy.get(id(e))), _NONE)
                    if idle is _NONE:
                        self._cond.wait()
                        continue
                    env = self._bound.pop(idle)
                if env is None:
                    self._cond.release()
                    try:
                        env = Environment(self.base.bundle, self.base.limits, self.base.source)
                    except BaseException:
                        self._cond.acquire()
                        self._made -= 1
                        raise
                    self._cond.acquire()
                env.new_session()  # nothing another attempt's queries did is seen by this one
                env.set_domain(domain)
                self._bound[key] = env
                break
            self._busy[id(env)] = self._busy.get(id(env), 0) + 1
            return env

    def release(self, key: str | None) -> None:
        """The attempt is over: its environment is free for the next one."""
        with self._cond:
            env = self._bound.pop(key, None)
            if env is None or self._busy.get(id(env)):
                if env is not None:  # a call of it still runs: it stays bound until evicted
                    self._bound[key] = env
                return
        env.new_session()  # the next attempt's SQL worker starts now, not at its first query
        with self._cond:
            self._free.append(env)
            self._cond.notify_all()

    def close(self) -> None:
        """Stop every environment made here (the base one is its owner's to close)."""
        with self._cond:
            made = [e for e in [*self._free, *self._bound.values()] if e is not self.base]
            self._free, self._bound, self._made = [self.base], OrderedDict(), 1
        for env in made:
            env.close()


_NONE = object()
