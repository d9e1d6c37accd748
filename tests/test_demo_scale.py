"""The demo data at large scales, tried at small ones: rows streamed to the CSV files, memory that does not grow
with the tables, and seeds loaded by DuckDB's CSV reader through real dbt (`--vars '{demo_csv_reader: true}'`)."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from dptool.demo import banking, ecommerce
from dptool.project.dbt import DbtProject
from tests.conftest import REPO, copy_demo_project, run_cli

MODULES = {"ecommerce": ecommerce, "banking": banking}
READER = ("--vars", "{demo_csv_reader: true}")


def _file_names(domain: str) -> list[str]:
    module = MODULES[domain]
    return [f"{banking.SEEDS[t]}.csv" if domain == "banking" else f"{t}.csv" for t in module.TABLES]


@pytest.mark.parametrize("domain", MODULES)
def test_streamed_files_are_the_committed_seeds(domain, tmp_path):
    """write_csvs streams its rows (bank transactions through month buckets), and scale 1 is still seeds/ byte
    for byte."""
    counts = MODULES[domain].write_csvs(tmp_path, 1.0, seed=42)
    for name in _file_names(domain):
        assert (tmp_path / name).read_bytes() == (REPO / "seeds" / domain / name).read_bytes(), name
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(_file_names(domain))  # no bucket file left
    assert list(counts) == list(MODULES[domain].TABLES)


@pytest.mark.parametrize("domain", MODULES)
def test_streamed_files_hold_the_generated_rows_in_order(domain, tmp_path):
    """At another scale and seed, each file reads back as generate()'s rows, in its order (transactions by date,
    then id, across every month bucket)."""
    module = MODULES[domain]
    module.write_csvs(tmp_path, 0.7, seed=11)
    tables = module.generate(0.7, seed=11)
    for table, name in zip(module.TABLES, _file_names(domain), strict=True):
        with open(tmp_path / name, encoding="utf-8", newline="") as f:
            assert list(csv.DictReader(f)) == tables[table], name
    if domain == "banking":
        months = {row["date"][:4] for row in tables["trans"]}
        assert len(months) > 60  # the rows crossed many buckets


# Peak RSS of a fresh process that writes the domain at scale 4 (40k orders; 1,440 accounts and ~350k
# transactions). Holding every row as a dict, as the generators did, took 159 and 226 MiB.
MEMORY_MIB = {"ecommerce": 100, "banking": 64}


@pytest.mark.parametrize("domain", MODULES)
def test_memory_does_not_hold_the_tables(domain, tmp_path):
    # VmHWM, not ru_maxrss: the child's ru_maxrss starts at this process's size (it was forked from it)
    script = (f"from dptool.demo import {domain} as m; m.write_csvs({str(tmp_path)!r}, 4, seed=1); "
              "print(next(int(x.split()[1]) for x in open('/proc/self/status') if x.startswith('VmHWM')) // 1024)")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=REPO)
    assert int(proc.stdout) < MEMORY_MIB[domain], f"{domain}: peak RSS {proc.stdout.strip()} MiB"


@pytest.fixture(scope="module")
def small_project(tmp_path_factory) -> DbtProject:
    """The demo project with both domains at scale 0.05, its dependencies installed."""
    root = copy_demo_project(tmp_path_factory.mktemp("scale") / "project")
    for domain in MODULES:
        proc = run_cli("demo-data", "--domain", domain, "--scale", "0.05", "--out", str(root / "seeds" / domain))
        assert proc.returncode == 0, proc.stderr
    project = DbtProject(root)
    project.run("deps")
    return project


def _seed_tables(path: Path) -> dict[str, tuple[list, list]]:
    """Each seed table of a DuckDB file: (its columns and types, its rows sorted)."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        names = con.execute("select schema_name, table_name from duckdb_tables() "
                            "where schema_name like '%\\_raw' escape '\\' order by 1, 2").fetchall()
        return {f"{s}.{t}": (con.execute("select column_name, data_type from information_schema.columns where "
                                         "table_schema = ? and table_name = ? order by ordinal_position",
                                         [s, t]).fetchall(),
                             sorted(con.execute(f'select * from "{s}"."{t}"').fetchall(), key=repr))
                for s, t in names}
    finally:
        con.close()


def test_csv_reader_loads_the_same_tables_and_dbt_builds_the_rest(small_project, tmp_path):
    """dbt's own seed and the CSV reader give the same tables (types and rows); `dbt build` with the reader then
    builds and tests everything else."""
    warehouse = small_project.project_dir / "dptool_demo.duckdb"
    results = small_project.run("seed")
    assert {r.status for r in results} == {"success"}
    shutil.copy(warehouse, tmp_path / "agate.duckdb")
    expected = _seed_tables(tmp_path / "agate.duckdb")
    assert len(expected) == 16

    results = small_project.run("build", *READER)
    # warn: a rule that changes no answer on so few rows (a data test configured to warn)
    failed = [(r.unique_id, r.message) for r in results if r.status not in ("success", "pass", "warn")]
    assert not failed
    seeds = [r for r in results if r.unique_id.startswith("seed.")]
    assert len(seeds) == 16 and all(r.message.startswith("INSERT ") for r in seeds)
    assert any(r.unique_id.startswith("model.") for r in results)
    assert _seed_tables(warehouse) == expected
    run = small_project.project_dir / "target" / "run" / "dptool_demo" / "seeds" / "banking" / "berka_trans.csv"
    assert run.read_text(encoding="utf-8").startswith("-- by DuckDB's CSV reader alone: COPY")  # not through agate
    run_results = json.loads((small_project.project_dir / "target" / "run_results.json").read_text())
    trans = next(r for r in run_results["results"] if r["unique_id"] == "seed.dptool_demo.berka_trans")
    assert trans["adapter_response"]["rows_affected"] == len(expected["banking_raw.berka_trans"][1])


def test_csv_reader_refuses_a_column_without_a_type(small_project):
    path = small_project.project_dir / "seeds" / "ecommerce" / "olist_product_category_name_translation.csv"
    original = path.read_text(encoding="utf-8")
    try:
        path.write_text("".join(line + (",extra\n" if i == 0 else ",x\n")
                                for i, line in enumerate(original.splitlines())), encoding="utf-8")
        results = small_project.run("seed", "--select", "olist_product_category_name_translation", *READER)
    finally:
        path.write_text(original, encoding="utf-8")
    [result] = results
    assert result.status == "error"
    assert "olist_product_category_name_translation: no column_types for extra" in result.message


def test_duckdb_memory_limit_from_the_environment(tmp_path, monkeypatch):
    """Large data on a shared machine: DPTOOL_DUCKDB_MEMORY_LIMIT bounds DuckDB in every file dptool opens (by
    default 40 % of the machine's memory, half DuckDB's own: generate has two open at once); a value that is no
    amount of memory is refused in one line."""
    from dptool.errors import DptoolError
    from dptool.project.warehouse import Warehouse

    path = tmp_path / "w.duckdb"
    duckdb.connect(str(path)).close()
    monkeypatch.delenv("DPTOOL_DUCKDB_MEMORY_LIMIT", raising=False)
    own = duckdb.connect()
    (default,) = own.execute("select current_setting('memory_limit')").fetchone()
    own.execute("set memory_limit = '40%'")
    (forty,) = own.execute("select current_setting('memory_limit')").fetchone()
    own.close()
    assert forty != default
    for read_only in (True, False):
        with Warehouse(path, read_only=read_only) as wh:
            assert wh.query("select current_setting('memory_limit')")[1] == [(forty,)]
    monkeypatch.setenv("DPTOOL_DUCKDB_MEMORY_LIMIT", "1GB")
    for read_only in (True, False):
        with Warehouse(path, read_only=read_only) as wh:
            assert wh.query("select current_setting('memory_limit')")[1] == [("953.6 MiB",)]
    monkeypatch.setenv("DPTOOL_DUCKDB_MEMORY_LIMIT", "lots")
    with pytest.raises(DptoolError, match=r"^DPTOOL_DUCKDB_MEMORY_LIMIT='lots': not an amount of memory"):
        Warehouse(path)
