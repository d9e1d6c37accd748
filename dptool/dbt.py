"""Every call into dbt goes through this module: runs, the profile, and the artifacts."""

from __future__ import annotations

import contextlib
import json
import os
from argparse import Namespace
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dptool.errors import DptoolError

# dbt must not try to phone home from a machine without internet.
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "False")


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


@dataclass(frozen=True)
class Connection:
    """Where the target's data lives: the adapter type and, for DuckDB, the database file."""

    adapter_type: str
    path: str | None = None
    database: str | None = None
    schema: str | None = None


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

    def _default_profiles_dir(self) -> Path:
        env = os.environ.get("DBT_PROFILES_DIR")
        if env:
            return Path(env).resolve()
        if (self.project_dir / "profiles.yml").is_file():
            return self.project_dir
        return Path.home() / ".dbt"

    @property
    def manifest_path(self) -> Path:
        return self.project_dir / "target" / "manifest.json"

    def load_manifest(self) -> dict:
        """The project's compiled manifest, as dbt last wrote it."""
        path = self.manifest_path
        if not path.is_file():
            raise DptoolError(f"{path}: no manifest; run `dbt parse` (or `dbt build`) in {self.project_dir} first")
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise DptoolError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None

    def run(self, *args: str, on_node_done: Callable[[], None] | None = None) -> list[NodeResult]:
        """Run one dbt command (e.g. "build", "--select", "tag:x") and return its per-node results.

        `on_node_done` is called as each node finishes (for a progress bar). Raises DptoolError when
        dbt itself fails (compilation, connection); failing models and tests are results, not errors.
        """
        from dbt.cli.main import dbtRunner

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
        # dbt resolves relative paths (a DuckDB file, logs) against the working directory.
        with contextlib.chdir(self.project_dir):
            callbacks = [lambda event: on_node_done() if event.info.name == "NodeFinished" else None]
            try:
                outcome = dbtRunner(callbacks=callbacks if on_node_done else []).invoke(cli)
            finally:
                _release_duckdb()
        if outcome.exception is not None:
            message = " ".join(str(outcome.exception).split())
            raise DptoolError(f"dbt {args[0]} failed in {self.project_dir}: {message}")
        return [_node_result(r) for r in getattr(outcome.result, "results", None) or []]

    def connection(self) -> Connection:
        """The target's adapter type and location, from the project's profile."""
        from dbt.config.runtime import load_profile
        from dbt.flags import set_from_args
        from dbt_common.context import set_invocation_context

        set_invocation_context(os.environ)
        set_from_args(Namespace(PROFILES_DIR=str(self.profiles_dir)), {})
        try:
            with contextlib.chdir(self.project_dir):
                profile = load_profile(str(self.project_dir), {}, None, self.target, None)
        except Exception as exc:  # dbt raises several unrelated types here
            message = " ".join(str(exc).split())
            raise DptoolError(f"{self.profiles_dir / 'profiles.yml'}: cannot load the profile: {message}") from None
        creds = profile.credentials
        path = getattr(creds, "path", None)
        if path and path != ":memory:" and not Path(path).is_absolute():
            path = str(self.project_dir / path)
        return Connection(creds.type, path, getattr(creds, "database", None), getattr(creds, "schema", None))


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
