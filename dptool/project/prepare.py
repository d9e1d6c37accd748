"""The start of a run on a user's dbt project: package check, catalog, rule documents, semantic-layer models.

`dptool generate` calls `prepare_catalog` once it has the manifest. It checks that the dptool dbt
package installed in the project is the CLI's own version, loads the catalog (declarations, the dbt
semantic layer, rule documents from `--rules-dir`), writes the semantic layer's metric models under
models/dptool_semantic/ (gold models `ref` them), and says which semantic metrics were skipped and why.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dptool.errors import DptoolError
from dptool.project.catalog import Catalog, load_catalog
from dptool.project.dbt import DbtProject

RULE_DOCS = "_dptool_rule_docs.md"


def rule_documents(rules_dir: str | Path | None, project_dir: Path) -> dict[str, str]:
    """Rule id -> document, from the markdown files of a folder: `<id>.md` or `rule__<id>.md`."""
    if rules_dir is None:
        return {}
    folder = Path(rules_dir)
    if not folder.is_dir() and not folder.is_absolute() and (project_dir / folder).is_dir():
        folder = project_dir / folder
    if not folder.is_dir():
        raise DptoolError(f"{rules_dir}: --rules-dir is not a folder")
    documents = {}
    for path in sorted(folder.rglob("*.md")):
        rule_id = path.stem.removeprefix("rule__")
        if rule_id in documents:
            raise DptoolError(f"{path}: a second document for rule {rule_id!r} in {folder}")
        documents[rule_id] = path.read_text(encoding="utf-8")
    if not documents:
        raise DptoolError(f"{folder}: --rules-dir holds no markdown file (<rule id>.md)")
    return documents


def prepare_catalog(project: DbtProject, manifest: dict, *, rules_dir: str | Path | None = None,
                    echo: Callable[[str], None] = print) -> Catalog:
    """The catalog of a project about to be generated from; see the module docstring."""
    from dptool.project import semantic

    documents = rule_documents(rules_dir, project.project_dir)
    catalog = load_catalog(manifest, str(project.manifest_path), documents)
    project.check_package()
    built_for = (manifest.get("metadata") or {}).get("adapter_type")
    target = project.connection().adapter_type
    if built_for and built_for != target:  # relation names in the manifest are another target's
        raise DptoolError(f"{project.manifest_path}: written for a {built_for} target, and this run's target is "
                          f"{target}; run `dbt build` for this target first")
    columns = relation_columns(manifest, project)
    if columns:  # the semantic layer's metrics read the columns the relations have, not those the YAML documents
        catalog = load_catalog(manifest, str(project.manifest_path), documents, columns)
    for line in semantic.summary(catalog.semantic):
        echo(f"  {line}")
    unused = sorted(set(documents) - set(catalog.rules))
    for rule_id in unused:
        echo(f"  note: --rules-dir has {rule_id}.md, and no rule macro rule__{rule_id} declares meta.dptool.rule")
    # gold models' descriptions show each rule's document as the docs block rule__<id>: a rule whose document
    # is not such a block of the user's (a markdown file of --rules-dir, an inline description) gets one
    theirs = {d.get("name") for d in manifest.get("docs", {}).values() if not semantic.is_generated(d)}
    blocks = {r.id: r.document for r in catalog.rules.values() if f"rule__{r.id}" not in theirs}
    extra = {RULE_DOCS: semantic.docs_blocks(blocks)} if blocks else {}
    semantic.write_models(project.project_dir, catalog.semantic, extra)
    return catalog


def relation_columns(manifest: dict, project: DbtProject) -> dict[str, list[str]]:
    """The columns of each semantic model's relation, as the target has them (a query that reads no row); a
    relation the target does not have yet is left out (its documented columns stand)."""
    from dptool.project.warehouse import Warehouse

    nodes = manifest.get("nodes", {})
    wanted = sorted({d for sm in (manifest.get("semantic_models") or {}).values()
                     for d in (sm.get("depends_on") or {}).get("nodes") or []
                     if (nodes.get(d) or {}).get("relation_name")})
    out: dict[str, list[str]] = {}
    if not wanted:
        return out
    with Warehouse.of(project.connection()) as warehouse:
        for uid in wanted:
            try:
                names, _ = warehouse.query(f"select * from {nodes[uid]['relation_name']} where 1 = 0")
            except DptoolError:
                continue
            out[uid] = list(names)
    return out


def manifest_behind_generated(project: DbtProject, manifest: dict) -> bool:
    """Whether `manifest` misses what prepare_catalog wrote under models/dptool_semantic/ (a file new, changed or
    deleted since dbt wrote it): `dptool graph` and `ablate` read those metric models and rule documents from it."""
    from dptool.project import semantic

    files = sorted((project.project_dir / "models" / semantic.GENERATED_DIR).glob("*"))
    nodes = {p.relative_to(project.project_dir).as_posix() for p in files if p.suffix in (".sql", ".md")}
    parsed = {n.get("original_file_path", "").replace("\\", "/")
              for kind in ("nodes", "docs") for n in (manifest.get(kind) or {}).values() if semantic.is_generated(n)}
    if nodes != parsed:
        return True
    written = project.manifest_path.stat().st_mtime if project.manifest_path.is_file() else 0.0
    return any(p.stat().st_mtime > written for p in files)  # a file's text changed (its properties too)
