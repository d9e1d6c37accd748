"""A data product in DP-Bench's shape written as dbt models that `dbt build` materializes (`dp create`, `dp import`).

One folder per data product under the output folder (default models/dptool_dp/<id>/):
- `<id>__<table>.sql` per table with non-derived columns: those columns, selected from the table;
- `<id>__<column>.sql` per derived column: its provenance SQL, with the tables as ref()/source();
- `_<id>.yml`: the models' properties, `meta.dptool.data_product: {id, request, created_by}` on the first,
  and the columns' descriptions; `<id>.dp.json`: the data product as a DP-Bench file.
Every model is a table in schema `dptool_dp`, tagged `dptool_dp` (`dbt build --select tag:dptool_dp`).
The folder is replaced as a whole, so a rerun leaves no model of an earlier one behind.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from sqlglot import exp

from dptool.dp import dpjson, yamlio
from dptool.dp.lineage import parse
from dptool.errors import DptoolError
from dptool.outdir import DATA_PRODUCT, MARKER, check_replaceable, publish, staging_folder
from dptool.project.catalog import Catalog

DEFAULT_OUT = "models/dptool_dp"
SCHEMA = "dptool_dp"
TAG = "dptool_dp"
_CONFIG = "{{ config(materialized='table', schema='" + SCHEMA + "', tags=['" + TAG + "']) }}"


def slug(text: str) -> str:
    """A dbt model name part: lower-case letters, digits and underscores."""
    value = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    if not value:
        raise DptoolError(f"{text!r} gives an empty model name; pass --name")
    return value if value[0].isalpha() else f"dp_{value}"


def relation_refs(manifest: dict, catalog: Catalog) -> dict[tuple[str, str], str]:
    """(domain, table name) -> the Jinja that points at it: ref('x') or source('s', 'x')."""
    nodes = {**manifest.get("nodes", {}), **manifest.get("sources", {})}
    refs = {}
    for uid, table in catalog.tables.items():
        node = nodes.get(uid, {})
        if node.get("resource_type") == "source":
            refs[(table.domain, table.name)] = f"{{{{ source('{node['source_name']}', '{node['name']}') }}}}"
        else:
            refs[(table.domain, table.name)] = f"{{{{ ref('{node.get('name', table.name)}') }}}}"
    return refs


def write_models(dp: dpjson.DataProduct, db: dpjson.Database, refs: dict[tuple[str, str], str], out_dir: str | Path,
                 dialect: str, source_dialect: str, created_by: str) -> list[Path]:
    """Write the data product's models, properties and DP-Bench file; return the files written."""
    name = slug(dp.id)
    models: list[tuple[str, str, list[dict]]] = []  # (model name, SQL, column properties)
    for table in dp.tables:
        if not table.columns:
            continue
        ref = _ref(refs, db.id, table.name)
        described = {c.name: c.description for t in db.tables if t.name == table.name for c in t.columns}
        select = ",\n".join(f"    {exp.to_identifier(c).sql(dialect)}" for c in table.columns)
        models.append((f"{name}__{slug(table.name)}", f"select\n{select}\nfrom {ref}\n",
                       [{"name": c, "description": described.get(c, "")} for c in table.columns]))
    taken = {m[0] for m in models}
    for derived in dp.derived_columns():
        model = f"{name}__{slug(derived.name)}"
        model = model if model not in taken else f"{model}_derived"
        taken.add(model)
        sql = _derived_sql(derived, db.id, refs, dialect, source_dialect)
        models.append((model, sql, [{"name": derived.name, "description": derived.description}]))
    if not models:
        raise DptoolError(f"data product {dp.id!r} has no column: nothing to write (lower --threshold?)")

    properties = []
    for i, (model, _, columns) in enumerate(models):
        decl = {"id": dp.id, "request": dp.request, "created_by": created_by} if i == 0 else \
            {"id": dp.id, "created_by": created_by}
        properties.append({"name": model, "description": f"Part of data product {dp.id}, written by dptool "
                                                          f"({created_by}).",
                           "config": {"meta": {"dptool": {"data_product": decl}}}, "columns": columns})

    final = check_replaceable(Path(out_dir) / name, DATA_PRODUCT)
    staging = staging_folder(final)
    try:
        for model, sql, _ in models:
            note = f"-- data product {dp.id}, written by dptool ({created_by})"
            (staging / f"{model}.sql").write_text(f"{_CONFIG}\n{note}\n{sql}", encoding="utf-8")
        yamlio.write(staging / f"_{name}.yml", {"version": 2, "models": properties},
                     f"# written by dptool ({created_by}); writing data product {dp.id} again replaces this folder")
        document = dpjson.Document(dialect=source_dialect, databases={db.id: db}, data_products=[dp])
        dpjson.write(document, staging / f"{name}.dp.json")
        publish(staging, final, DATA_PRODUCT)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return sorted(p for p in final.iterdir() if p.name != MARKER)


def _unaliased(projection: exp.Expression) -> exp.Expression:
    return projection.this if isinstance(projection, exp.Alias) else projection


def _ref(refs: dict[tuple[str, str], str], domain: str, table: str) -> str:
    try:
        return refs[(domain, table)]
    except KeyError:
        raise DptoolError(f"table {table!r} of database {domain!r} is no agent-visible table of this project") \
            from None


def _derived_sql(derived: dpjson.DerivedColumn, domain: str, refs: dict[tuple[str, str], str], dialect: str,
                 source_dialect: str) -> str:
    """The derived column's provenance as model SQL: tables as Jinja refs, one output named after it."""
    tree = parse(derived.provenance, source_dialect)
    if isinstance(tree, exp.Select):
        # The derived value is the one projection that is not a grouping key: it takes the column's name.
        keys = {e.sql() for e in (tree.args["group"].expressions if tree.args.get("group") else [])}
        values = [i for i, s in enumerate(tree.selects) if _unaliased(s).sql() not in keys]
        if len(values) == 1:
            projections = list(tree.selects)
            projections[values[0]] = exp.alias_(_unaliased(projections[values[0]]).copy(), derived.name)
            tree.set("expressions", projections)
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    jinja = {}
    for i, table in enumerate(list(tree.find_all(exp.Table))):
        if table.name in ctes or table.db:
            continue
        marker = f"dptool_relation_{i}"
        jinja[marker] = _ref(refs, domain, table.name)
        placeholder = exp.table_(marker)
        if table.args.get("alias"):
            placeholder.set("alias", table.args["alias"])
        else:
            placeholder.set("alias", exp.TableAlias(this=exp.to_identifier(table.name)))  # columns may name it
        table.replace(placeholder)
    sql = tree.sql(dialect, pretty=True)
    for marker, ref in jinja.items():
        sql = re.sub(rf"\b{marker}\b", ref, sql)
    return sql + "\n"
