"""Every call into dbt goes through this module: runs, the profile, and the artifacts."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import threading
import time
from argparse import Namespace
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from dptool.errors import DptoolError
from dptool.project.declarations import check_manifest

# dbt must not try to phone home from a machine without internet.
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "False")

# The dbt commands that compile models, which dptool runs on one thread: dbt-core 1.11 compiles an ephemeral model
# that two threads reach at once wrongly (the model injected with its own CTEs inside: a syntax error in a model
# that reads it; dbt-core#12602, fixed after 1.11). Compiling is Python under the GIL and DuckDB runs each query on
# every core, so a second thread gained little; a profile's `threads` still sets dptool's own parallel queries.
_COMPILING = frozenset({"build", "compile", "run", "test", "seed", "snapshot", "show", "docs", "retry", "clone",
                        "run-operation"})

# The dbt var that enables the gold models (models/dptool_gold/): they are off unless a command asks for them
# (`--vars '{dptool_gold: true}'`), so that none of a repo's own dbt commands builds them, whatever it selects (a
# --select, --exclude or --selector replaces any default selector). dptool's own dbt calls pass it (DbtProject.run).
GOLD_VAR = "dptool_gold"
GOLD_VARS = '{"' + GOLD_VAR + '": true}'
# the commands that take --vars
_WITH_VARS = _COMPILING | {"parse", "ls", "list", "source"}


@dataclass(frozen=True)
class NodeResult:
    """What dbt reported for one node of a run."""

    unique_id: str
    resource_type: str
    status: str
    message: str
    attached_node: str | None = None
    compiled_code: str | None = None
    relation_name: str | None = None
    name: str = ""
    tags: tuple[str, ...] = ()
    failures: int | None = None  # rows a failing test returned


class NodeFailed(DptoolError):
    """A dbt command stopped at a failing node: `failed` maps each failed node's unique_id to dbt's message,
    `succeeded` holds the unique_ids of the nodes done before it (their artifacts are written)."""

    def __init__(self, message: str, failed: dict[str, str], succeeded: set[str]):
        super().__init__(message)
        self.failed = failed
        self.succeeded = succeeded


@dataclass(frozen=True)
class Connection:
    """Where the target's data lives: the adapter type and, for DuckDB, the database file.

    `project` is the dbt project whose profile this is: other targets than DuckDB files are read
    through its dbt adapter (AdapterSession).
    """

    adapter_type: str
    path: str | None = None
    database: str | None = None
    schema: str | None = None
    project: DbtProject | None = field(default=None, compare=False, repr=False)


class DbtProject:
    """A dbt project on disk, run in-process with dbt's programmatic runner."""

    def __init__(self, project_dir: str | Path, profiles_dir: str | Path | None = None, target: str | None = None):
        self.project_dir = Path(project_dir).resolve()
        if not (self.project_dir / "dbt_project.yml").is_file():
            raise DptoolError(
                f"{self.project_dir}: no dbt_project.yml here; run inside a dbt project or pass --project-dir"
            )
        self.profiles_dir = Path(profiles_dir).resolve() if profiles_dir else self._default_profiles_dir()
        self.target = target
        self.dbt_seconds = 0.0  # wall time spent inside dbt's runner, for the benchmark's overhead ratio
        self.dbt_cpu_seconds = 0.0  # CPU time of this process meanwhile: what others' load on the machine leaves out
        self._parsed = None  # the manifest this project's last dbt run parsed, for the next run's partial parse

    def _default_profiles_dir(self) -> Path:
        env = os.environ.get("DBT_PROFILES_DIR")
        if env:
            return Path(env).resolve()
        if (self.project_dir / "profiles.yml").is_file():
            return self.project_dir
        return Path.home() / ".dbt"

    @property
    def target_dir(self) -> Path:
        """Where dbt writes its artifacts: $DBT_TARGET_PATH, else the project's target-path, else target/."""
        path = os.environ.get("DBT_TARGET_PATH") or _project_yml(self.project_dir).get("target-path") or "target"
        return self.project_dir / path

    @property
    def manifest_path(self) -> Path:
        return self.target_dir / "manifest.json"

    def load_manifest(self) -> dict:
        """The project's compiled manifest, as dbt last wrote it."""
        path = self.manifest_path
        if not path.is_file():
            raise DptoolError(f"{path}: no manifest; run `dbt parse` (or `dbt build`) in {self.project_dir} first")
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise DptoolError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
        check_manifest(manifest, str(path))
        return manifest

    def run(self, *args: str, on_node_done: Callable[[], None] | None = None, gold: bool = False) -> list[NodeResult]:
        """Run one dbt command (e.g. "build", "--select", "tag:x") and return its per-node results.

        With `gold`, the gold models are enabled (GOLD_VAR); without, they are disabled, as in a user's own runs.

        `on_node_done` is called as each node finishes (for a progress bar). Raises DptoolError when
        dbt itself fails (compilation, connection); failing models and tests are results, not errors.
        A command that stops at its first failing node (`dbt compile`) raises NodeFailed, which names
        the nodes that failed.
        """
        from dbt.cli.main import dbtRunner

        if args and args[0] not in ("deps", "clean", "debug", "init"):
            self.check_package(required=False)  # a stale package would compile gold models with old macros
        cli = [
            *args,
            "--project-dir", str(self.project_dir),
            "--profiles-dir", str(self.profiles_dir),
            "--log-level", "none",  # dptool reports progress itself; dbt still logs to logs/dbt.log
            "--log-level-file", "info",
            "--no-use-colors",
        ]
        if self.target:
            cli += ["--target", self.target]
        if gold and args and args[0] in _WITH_VARS and "--vars" not in args:
            cli += ["--vars", GOLD_VARS]
        if args and args[0] in _COMPILING:
            cli += ["--threads", "1"]  # see _COMPILING
        failed: dict[str, str] = {}
        succeeded: set[str] = set()

        def node_finished(event) -> None:
            if event.info.name != "NodeFinished":
                return
            if event.data.node_info.node_status == "error":
                failed[event.data.node_info.unique_id] = event.data.run_result.message
            elif event.data.node_info.node_status == "success":
                succeeded.add(event.data.node_info.unique_id)
            if on_node_done:
                on_node_done()

        # dbt resolves relative paths (a DuckDB file, logs) against the working directory.
        with contextlib.chdir(self.project_dir):
            start, cpu = time.perf_counter(), time.process_time()
            try:
                with _insisting_interrupt() as interrupted, _partial_parse_in_memory(self):
                    outcome = dbtRunner(callbacks=[node_finished]).invoke(cli)
                    if interrupted.is_set() and not isinstance(outcome.exception, KeyboardInterrupt):
                        raise KeyboardInterrupt  # dbt swallowed it (a handler of its own, a __del__) and went on
            finally:
                _release_duckdb()
                self.dbt_seconds += time.perf_counter() - start
                self.dbt_cpu_seconds += time.process_time() - cpu
        if isinstance(outcome.exception, KeyboardInterrupt | SystemExit):
            # dbt's runner returns every BaseException as its outcome: a Ctrl-C must stop dptool, not fail a node
            raise outcome.exception
        if outcome.exception is not None:
            message = " ".join(str(outcome.exception).split())
            message = f"dbt {args[0]} failed in {self.project_dir}: {message}"
            raise NodeFailed(message, failed, succeeded) if failed else DptoolError(message)
        return [_node_result(r) for r in getattr(outcome.result, "results", None) or []]

    def connection(self) -> Connection:
        """The target's adapter type and location, from the project's profile."""
        creds = self.profile().credentials
        path = getattr(creds, "path", None)
        if path and path != ":memory:" and not Path(path).is_absolute():
            path = str(self.project_dir / path)
        return Connection(creds.type, path, getattr(creds, "database", None), getattr(creds, "schema", None),
                          project=self)

    def profile(self):
        """The project's dbt profile (dbt.config.Profile), rendered for the target."""
        from dbt.config.runtime import load_profile
        from dbt.flags import set_from_args
        from dbt_common.context import set_invocation_context

        set_invocation_context(os.environ)
        set_from_args(Namespace(PROFILES_DIR=str(self.profiles_dir)), {})
        try:
            with contextlib.chdir(self.project_dir):
                return load_profile(str(self.project_dir), {}, None, self.target, None)
        except Exception as exc:  # dbt raises several unrelated types here
            message = " ".join(str(exc).split())
            raise DptoolError(f"{self.profiles_dir / 'profiles.yml'}: cannot load the profile: {message}") from None

    def installed_package(self) -> tuple[Path, str] | None:
        """Where `dbt deps` installed the dptool dbt package in this project, and its version; None if not."""
        folder = self.project_dir / _project_yml(self.project_dir).get("packages-install-path", "dbt_packages")
        if not folder.is_dir():
            return None
        for child in sorted(folder.iterdir()):
            conf = _project_yml(child) if child.is_dir() else {}
            if conf.get("name") == "dptool":
                return child, str(conf.get("version", ""))
        return None

    def check_package(self, required: bool = True) -> None:
        """The dptool dbt package installed in the project must be the CLI's own version.

        Raises a one-line DptoolError naming both versions and the fix. With `required`, a project
        without the package is an error too.
        """
        from dptool import __version__

        found = self.installed_package()
        if found is None:
            if required:
                raise DptoolError(f"{self.project_dir}: the dptool dbt package is not installed; run "
                                  "`dptool init`, then `dbt deps`")
            return
        path, installed = found
        if installed != __version__:
            raise DptoolError(f"{path}: the dptool dbt package is version {installed or '?'} and the dptool CLI "
                              f"is {__version__}; run `dptool init`, then `dbt deps`, so that both are the same")


def _project_yml(folder: Path) -> dict:
    import yaml

    path = folder / "dbt_project.yml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


class AdapterSession:
    """SQL on the project's target through its dbt adapter: what dptool reads from a warehouse that is
    not a DuckDB file (PostgreSQL, Snowflake, Spark, ...).

    The adapter is built from the project's profile alone, outside dbt's adapter registry, so it never
    meets the adapter a dbt run in the same process registers. Each query runs in its own transaction,
    rolled back once its rows are read: dptool holds no lock a later `dbt build` would wait for.
    """

    def __init__(self, project: DbtProject):
        from dbt.adapters.factory import FACTORY
        from dbt.mp_context import get_mp_context

        profile = project.profile()
        self.adapter_type = profile.credentials.type
        self.where = f"profile {profile.profile_name!r}, target {profile.target_name!r} ({self.adapter_type})"
        try:
            FACTORY.load_plugin(self.adapter_type)
            adapter_class = FACTORY.get_adapter_class_by_name(self.adapter_type)
        except Exception as exc:
            raise DptoolError(f"{self.where}: no dbt adapter for {self.adapter_type!r} "
                              f"({' '.join(str(exc).split())}); install dbt-{self.adapter_type}") from None
        self.adapter = adapter_class(profile, get_mp_context())
        self._named = self.adapter.connection_named("dptool")
        self._named.__enter__()
        try:
            with contextlib.chdir(project.project_dir):  # a relative path in the profile is the project's
                self.adapter.connections.get_thread_connection().handle  # noqa: B018 (dbt opens it lazily, here)
        except Exception as exc:
            self.close()
            raise DptoolError(f"{self.where}: cannot connect: {' '.join(str(exc).split())}") from None

    def query(self, sql: str) -> tuple[list[str], list[str], list[tuple]]:
        """Run one query: its column names, their types as the adapter names them, and its rows."""
        manager = self.adapter.connections
        try:
            _, cursor = manager.add_query(sql, auto_begin=True)
            description = cursor.description or []
            rows = [tuple(r) for r in cursor.fetchall()] if description else []
        except Exception as exc:
            manager.rollback_if_open()
            hint = " (has `dbt build` run for this target?)" if "does not exist" in str(exc) else ""
            raise DptoolError(f"{self.where}: query failed: {' '.join(str(exc).split())}{hint}") from None
        manager.rollback_if_open()
        names = [d[0] for d in description]
        types = []
        for d in description:
            try:
                types.append(manager.data_type_code_to_name(d[1]))
            except Exception:  # adapters without the mapping: the type is read from the values
                types.append("")
        return names, types, rows

    def close(self) -> None:
        try:
            self._named.__exit__(None, None, None)
        finally:
            self.adapter.cleanup_connections()
            if self.adapter_type == "duckdb":
                _release_duckdb()


_PARSING = threading.Lock()  # the loader's methods are patched for one run at a time


@contextlib.contextmanager
def _partial_parse_in_memory(project: DbtProject):
    """dbt's partial parse of this run starts from the manifest the project's last run in this process parsed,
    not from target/partial_parse.msgpack.

    Each of generate's compiles adds batch models to a project otherwise unchanged: dbt re-parses only the files
    that changed either way, but reading the saved manifest back from msgpack and writing it again cost more
    than that, and grow with the project. The kept manifest passes dbt's own checks first (dbt version, vars,
    profile, project config, env vars), and has what the last run compiled into it undone, as a manifest read
    from disk would. Only a parse that finished is kept (one that failed part-way may have left it half-changed),
    and a manifest taken from memory is not written back: the file on disk stays a valid earlier state, from which
    the next process parses what changed since.
    """
    try:
        from dbt.flags import get_flags
        from dbt.parser.manifest import ManifestLoader
        from dbt_common.events.functions import get_invocation_id

        read, write, load = (ManifestLoader.read_manifest_for_partial_parse,
                             ManifestLoader.write_manifest_for_partial_parse, ManifestLoader.load)
        ManifestLoader.is_partial_parsable  # noqa: B018 (a dbt without it gets no patch)
    except (ImportError, AttributeError):
        yield
        return
    kept, project._parsed = project._parsed, None

    def read_kept(loader):
        if kept is not None and get_flags().PARTIAL_PARSE and loader.is_partial_parsable(kept)[0]:
            _uncompiled(kept)
            kept.metadata.generated_at = datetime.now(UTC).replace(tzinfo=None)
            kept.metadata.invocation_id = get_invocation_id()
            return kept
        return read(loader)

    def write_unless_kept(loader):
        if kept is None or loader.manifest is not kept:
            write(loader)

    def load_and_keep(loader):
        manifest = load(loader)
        project._parsed = manifest
        return manifest

    with _PARSING:
        ManifestLoader.read_manifest_for_partial_parse = read_kept
        ManifestLoader.write_manifest_for_partial_parse = write_unless_kept
        ManifestLoader.load = load_and_keep
        try:
            yield
        finally:
            ManifestLoader.read_manifest_for_partial_parse = read
            ManifestLoader.write_manifest_for_partial_parse = write
            ManifestLoader.load = load


def _uncompiled(manifest) -> None:
    """Undo in place what compiling did to a manifest: a node compiled before is compiled again, its ephemeral
    models injected anew (dbt skips a node already marked injected), and the lookups are built again."""
    from dbt.contracts.graph.nodes import CompiledNode

    for node in manifest.nodes.values():
        # a seed or a snapshot-like node is no CompiledNode: its `compiled` and `extra_ctes*` are read-only properties
        if not isinstance(node, CompiledNode):
            continue
        if node.compiled or node.extra_ctes:
            node.compiled = False
            node.compiled_code = None
            node.extra_ctes_injected = False
            node.extra_ctes = []
            node._pre_injected_sql = None
    for name in [f.name for f in dataclasses.fields(manifest) if f.name.startswith("_") and f.name.endswith("_lookup")]:
        setattr(manifest, name, None)


@contextlib.contextmanager
def _insisting_interrupt():
    """While dbt runs, a Ctrl-C is raised again every half second until dbt's runner returns: a KeyboardInterrupt
    raised where dbt ignores it (its parser, a destructor) would otherwise let a long parse or compile go on."""
    import signal
    import threading

    interrupted = threading.Event()
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        yield interrupted
        return
    done = threading.Event()
    lock = threading.Lock()
    watchdog = threading.Thread(target=lambda: insist(), daemon=True)

    def handler(signum, frame):
        if done.is_set():  # a repeat raised by the watchdog just before dbt returned: the first one is on its way
            return
        if not interrupted.is_set():
            interrupted.set()
            watchdog.start()
        raise KeyboardInterrupt

    def insist():
        while not done.wait(0.5):
            with lock:
                if not done.is_set():
                    _interrupt_main()

    before = signal.signal(signal.SIGINT, handler)
    try:
        yield interrupted
    finally:
        with lock:
            done.set()
        if watchdog.is_alive():
            watchdog.join()
        if interrupted.is_set():
            # a repeat the watchdog raised just before `done` may still be pending: with Python's own handler back,
            # it would raise a second KeyboardInterrupt in the caller's clean-up (the CLI ignores SIGINT once it exits)
            signal.signal(signal.SIGINT, lambda signum, frame: None)
        else:
            signal.signal(signal.SIGINT, before if before is not None else signal.default_int_handler)


def _interrupt_main() -> None:
    import _thread

    _thread.interrupt_main()


def _release_duckdb() -> None:
    """Close the DuckDB database dbt-duckdb keeps open for the life of the process.

    DuckDB refuses a second connection to a file that this process holds with another
    configuration, so without this dptool could not read the tables dbt just built.
    """
    try:
        from dbt.adapters.duckdb.connections import DuckDBConnectionManager
    except ImportError:
        return
    with DuckDBConnectionManager._LOCK:
        env = DuckDBConnectionManager._ENV
        if env is not None:
            env.close()
            DuckDBConnectionManager._ENV = None


def _node_result(result) -> NodeResult:
    node = result.node
    return NodeResult(
        unique_id=node.unique_id,
        resource_type=str(node.resource_type),
        status=str(result.status),
        message=result.message or "",
        attached_node=getattr(node, "attached_node", None),
        compiled_code=getattr(node, "compiled_code", None),
        relation_name=getattr(node, "relation_name", None),
        name=node.name,
        tags=tuple(node.tags),
        failures=result.failures,
    )


def dbt_version() -> str:
    """The installed dbt-core version."""
    from dbt.version import __version__

    return __version__
