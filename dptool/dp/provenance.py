"""Column lineage written where dbt docs show it: the data-product models' properties files.

For every column of every data-product model, the column's entry in the model's properties file gets
- its description: the hand-written sentence, then a "Provenance:" part (derived or not, kind, source
  columns with their edge types, the expression, and for a derived column the SQL that computes it from
  the tables), and
and the model's `config.meta.dptool.column_provenance` holds the same as data, per column (derived, kind,
expression, edges), for tools. On the model, not the column: dbt docs shows an expanded column's meta as
one unbroken line of JSON, which widened the row until the provenance sentences ran past the panel's edge.
The model that declares the data product gets its request and questions (each with its SQL over the tables
and from the data product) in its description; the data product's other models say where those are.

dbt docs shows a column's description twice: collapsed, as raw text on one line cut at the table's width,
and expanded, rendered as markdown. So the provenance part is plain sentences and indented code blocks:
no markdown sign shows in the collapsed line, and the expanded one renders the SQL as code. Columns the
SQL has and the file lacks are added. Rewriting is idempotent (the generated parts are replaced, never
appended twice); the file's header comment is kept, other comments are not (PyYAML keeps none).
"""

from __future__ import annotations

from pathlib import Path

import sqlglot
import yaml

from dptool.dp import yamlio
from dptool.dp.lineage import UNRESOLVED, ColumnLineage, rename_tables
from dptool.dp.products import PRODUCT_MARKS, PROVENANCE_MARK, ModelLineage, ProjectProducts, human_description
from dptool.errors import DptoolError


def write_provenance(project_dir: str | Path, products: ProjectProducts, dialect: str) -> list[Path]:
    """Update the properties file of every data-product model; return the files that changed."""
    project_dir = Path(project_dir)
    by_file: dict[str, list[ModelLineage]] = {}
    for model in products.models.values():
        path = model.properties_path or str(Path(model.sql_path).with_name(f"_{model.name}__provenance.yml"))
        by_file.setdefault(path, []).append(model)
    changed = []
    for relative, models in sorted(by_file.items()):
        path = project_dir / relative
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        try:
            data = yaml.safe_load(text) if text else None
        except yaml.YAMLError as exc:
            raise DptoolError(f"{relative}: not valid YAML ({' '.join(str(exc).split())[:120]})") from None
        data = data if isinstance(data, dict) else {"version": 2}
        entries = data.setdefault("models", [])
        for model in sorted(models, key=lambda m: m.name):
            entry = next((e for e in entries if isinstance(e, dict) and e.get("name") == model.name), None)
            if entry is None:
                entry = {"name": model.name}
                entries.append(entry)
            human = human_description(str(entry.get("description") or ""))
            entry["description"] = (human + "\n\n" if human else "") + describe_model(model, products, dialect)
            entry["columns"] = _columns(entry.get("columns") or [], model, products.table_names, dialect)
            dptool = entry.setdefault("config", {}).setdefault("meta", {}).setdefault("dptool", {})
            dptool["column_provenance"] = {name: _data(col, products.table_names)
                                           for name, col in model.columns.items()}
        if yamlio.write(path, data, yamlio.header(text)):
            changed.append(path)
    return changed


def _columns(existing: list, model: ModelLineage, names: dict[str, str], dialect: str) -> list[dict]:
    by_name = {c.get("name"): c for c in existing if isinstance(c, dict)}
    result = []
    for name, col in model.columns.items():
        entry = dict(by_name.pop(name, None) or {"name": name})
        human = human_description(str(entry.get("description") or ""))
        entry["description"] = (human + "\n\n" if human else "") + describe(col, names, dialect)
        _drop_column_meta(entry)
        result.append(entry)
    result.extend(by_name.values())  # documented columns the SQL no longer has: the user's to remove
    return result


def _data(col: ColumnLineage, names: dict[str, str]) -> dict:
    return {
        "derived": col.derived,
        "kind": col.kind,
        "through_join": col.through_join,
        "expression": col.expression,
        "edges": [yamlio.Flow(source=_source(e.relation, e.column, names), type=e.type) for e in col.edges],
    }


def _drop_column_meta(entry: dict) -> None:
    """Remove the column-level provenance an earlier dptool wrote, and the mappings it leaves empty."""
    config = entry.get("config")
    meta = config.get("meta") if isinstance(config, dict) else None
    dptool = meta.get("dptool") if isinstance(meta, dict) else None
    if not isinstance(dptool, dict) or "provenance" not in dptool:
        return
    del dptool["provenance"]
    for parent, key in ((meta, "dptool"), (config, "meta"), (entry, "config")):
        if parent[key] == {}:
            del parent[key]


def _source(relation: str, column: str, names: dict[str, str]) -> str:
    return f"{names.get(relation, relation.rpartition('.')[2])}.{column}" if relation else column


_KINDS = {"aggregate": "an aggregate", "derived": "an expression", "cast": "a cast"}


def describe(col: ColumnLineage, names: dict[str, str], dialect: str) -> str:
    """The text a column's docs show after its description: plain sentences and indented code blocks."""
    sources = " and ".join(f"{_source(e.relation, e.column, names)} ({e.type})" for e in col.edges)
    if col.derived:
        what = _KINDS.get(col.kind, col.kind)
        how = f"derived ({what}" + (", through a join)" if col.through_join else ")")
        origin = sources or ("no column: it counts rows" if col.kind == "aggregate" else "no source column")
        lines = [f"{PROVENANCE_MARK} {how} from {origin}.", "", "Expression:", "",
                 _code(col.expression)]
    else:
        lines = [f"{PROVENANCE_MARK} non-derived, a copy of {sources}"
                 + (f", reached through a join on {', '.join(_source(r, c, names) for r, c in col.join_keys)}."
                    if col.through_join else ".")]
    if any(e.type == UNRESOLVED for e in col.edges):
        lines += ["", "Some sources are unresolved: sqlglot could not tie them to a column of catalog.json."]
    if col.derived:
        lines += ["", "Computed from the tables by:", "", _code(rename_tables(col.provenance, names).sql(dialect,
                                                                                                     pretty=True))]
    return "\n".join(lines)


def describe_model(model: ModelLineage, products: ProjectProducts, dialect: str) -> str:
    """The markdown a data-product model's page shows after its description: the data product's request and
    its questions, on the model that declares them; where to find them, on its other models."""
    product = next(p for p in products.document.data_products if p.id == model.dp_id)
    if not model.holds_request:
        holder = next((m.name for m in products.models.values() if m.dp_id == model.dp_id and m.holds_request), "")
        return f"{PRODUCT_MARKS[1]}{product.id}: its request and questions are on {holder}."
    lines = [f"{PRODUCT_MARKS[0]} ({product.id})", "", product.request, "", "### Questions it answers"]
    for i, question in enumerate(product.questions, 1):
        lines += ["", f"{i}. {question.question}", "", "   Over the tables:", "", _fenced(question.sql, dialect)]
        if question.dp_sql:
            lines += ["", "   From the data product:", "", _fenced(question.dp_sql, dialect)]
    return "\n".join(lines)


def _code(sql: str) -> str:
    """An indented markdown code block: no sign of markdown when dbt docs shows it collapsed as raw text."""
    return "\n".join("    " + line for line in sql.splitlines())


def _fenced(sql: str, dialect: str) -> str:
    """A SQL code block inside a numbered list item (indented to the item's text)."""
    pretty = sqlglot.transpile(sql, read=dialect, write=dialect, pretty=True)[0]
    return "\n".join("   " + line for line in ["```sql", *pretty.splitlines(), "```"])
