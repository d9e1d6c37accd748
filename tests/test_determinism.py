"""Same seed, data and manifest -> byte-identical bundle files (warehouse.duckdb aside: DuckDB's file
format is not byte-stable, so its tables are compared by content)."""

from __future__ import annotations

import duckdb

from dptool.pipeline import generate


def _files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "warehouse.duckdb"}


def _tables(path):
    con = duckdb.connect(str(path), read_only=True)
    names = [r[0] for r in con.execute(
        "select table_schema || '.' || table_name from information_schema.tables order by 1").fetchall()]
    return {n: con.execute(f"select * from {n} order by all").fetchall() for n in names}


def test_same_seed_gives_a_byte_identical_bundle(demo_project, demo_bundle, tmp_path):
    first, _ = demo_bundle
    second = generate(demo_project.project_dir, tmp_path / "again", seed=42, echo=lambda _: None,
                      progress=False).bundle
    assert _files(first).keys() == _files(second).keys()
    again = _files(second)
    for name, content in _files(first).items():
        changed = [(a, b) for a, b in zip(content.splitlines(), again[name].splitlines(), strict=False) if a != b]
        assert content == again[name], (name, changed[:1])
    assert _tables(first / "warehouse.duckdb") == _tables(second / "warehouse.duckdb")
