"""A local Apache Spark for the tests that run dbt on Spark: dbt-spark's `session` method (pyspark and a JVM in
this process), nothing started outside the machine.

One JVM serves a process, and its warehouse folder and Hive metastore (Derby) are fixed when it starts: every
project a test process builds on Spark shares one folder, made here once per process and removed at exit; each
project keeps to its own schemas. The tests skip with the reason when Java 17+, pyspark or dbt-spark is missing,
unless DPTOOL_REQUIRE_SPARK=1 (`make test-spark`, CI), under which they fail instead.

A project is set up for Spark as the README tells a user: a `spark` output in its profiles.yml, and the dispatch
of dbt's seed macros to the dptool package (dbt-spark's session method writes a NULL as the text 'None' and
breaks on a quote in a seed; the package loads seeds with literals instead).
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml

REQUIRE = "DPTOOL_REQUIRE_SPARK"
TARGET = "spark"
_folder: Path | None = None


def unavailable() -> str | None:
    """Why Spark cannot run here (None when it can): Java 17 or later, pyspark and dbt-spark are needed."""
    java_home = os.environ.get("JAVA_HOME")
    java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if not java or not Path(java).exists():
        return "no Java (install Debian's openjdk-17-jre-headless)"
    try:
        proc = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`java -version` failed: {exc}"
    found = re.search(r'version "(\d+)(?:\.(\d+))?', proc.stderr + proc.stdout)
    if not found:
        return f"cannot read the Java version from {(proc.stderr or proc.stdout).strip()[:200]!r}"
    major = int(found.group(1)) if found.group(1) != "1" else int(found.group(2) or 0)
    if major < 17:
        return f"Java {major}: pyspark 4 needs Java 17 or later"
    try:
        import dbt.adapters.spark  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as exc:
        return f"{exc.name} is not installed (pip install 'dbt-dptool[spark]', or `make test-spark`)"
    return None


def require() -> None:
    """Skip the calling test (or module) when Spark cannot run here; fail instead under DPTOOL_REQUIRE_SPARK=1."""
    reason = unavailable()
    if reason is None:
        return
    if os.environ.get(REQUIRE) == "1":
        pytest.fail(f"{REQUIRE}=1 and Spark cannot run here: {reason}")
    pytest.skip(f"Spark cannot run here: {reason}")


def folder() -> Path:
    """This process's Spark warehouse and metastore folder (created on first use, removed at exit)."""
    global _folder
    if _folder is None:
        _folder = Path(tempfile.mkdtemp(prefix="dptool-spark-"))
        atexit.register(shutil.rmtree, _folder, True)
    return _folder


def output(schema: str) -> dict:
    """A dbt-spark `session` output: a local SparkSession on two cores, its data in `folder()`."""
    home = folder()
    return {
        "type": "spark",
        "method": "session",
        "host": "NA",  # required by dbt-spark's credentials, unused by the session method
        "schema": schema,
        "threads": 2,  # two queries at a time: one plans while the other runs (dptool reads through the adapter)
        "server_side_parameters": {
            "spark.master": "local[2]",
            # the driver's RPC and block manager on loopback only, not on the machine's network interface
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.driver.memory": "2g",
            "spark.sql.warehouse.dir": str(home / "warehouse"),
            "spark.hadoop.javax.jdo.option.ConnectionURL":
                f"jdbc:derby:;databaseName={home / 'metastore_db'};create=true",
            # derby.log beside the metastore, not in the working directory (the project)
            "spark.driver.extraJavaOptions": f"-Dderby.system.home={home}",
            # small data, many small queries (two at a time, `threads`): what Spark spends per query, not per row,
            # is the cost. One shuffle partition each (the default 200 cost more than the query); no adaptive
            # re-planning after each stage, and no Java compiled per stage (whole-stage codegen): together 1.5-2x
            # faster on generate's gold and probe queries replayed on one session, the same rows
            "spark.sql.shuffle.partitions": "1",
            "spark.default.parallelism": "2",
            "spark.sql.adaptive.enabled": "false",
            "spark.sql.codegen.wholeStage": "false",
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.log.level": "ERROR",
        },
    }


def start() -> dict[str, float]:
    """Start this process's SparkSession as the `spark` output configures it, and open its metastore.

    Returns the seconds of each (both near zero when the session runs already): dbt-spark's session method then
    finds this session, with the same configuration, on its first query.
    """
    import time

    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # read by the JVM's launcher, before any setting

    begin = time.perf_counter()
    builder = SparkSession.builder.enableHiveSupport()
    for key, value in output("default")["server_side_parameters"].items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    started = time.perf_counter()
    session.sql("show databases").collect()  # the Hive metastore (Derby) is created on first use
    return {"session start": started - begin, "metastore": time.perf_counter() - started}


def add_target(project_dir: Path, schema: str) -> None:
    """Give the project's profile a `spark` output writing to `schema`, and dispatch dbt's seed macros to dptool."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # read by the JVM's launcher, before any setting
    project_dir = Path(project_dir)
    conf = yaml.safe_load((project_dir / "dbt_project.yml").read_text(encoding="utf-8"))
    profiles_path = project_dir / "profiles.yml"
    profiles = yaml.safe_load(profiles_path.read_text(encoding="utf-8"))
    profiles[conf["profile"]]["outputs"][TARGET] = output(schema)
    profiles_path.write_text(yaml.safe_dump(profiles, sort_keys=False), encoding="utf-8")
    dispatch = [{"macro_namespace": "dbt", "search_order": [conf["name"], "dptool", "dbt"]}]
    if conf.get("dispatch") != dispatch:
        text = (project_dir / "dbt_project.yml").read_text(encoding="utf-8")
        text += "\n" + yaml.safe_dump({"dispatch": dispatch}, sort_keys=False)
        (project_dir / "dbt_project.yml").write_text(text, encoding="utf-8")
