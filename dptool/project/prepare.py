"""The start of a run on a user's dbt project: package check, catalog, rule documents, semantic-layer models.

`dptool generate` calls `prepare_catalog` once it has the manifest. It refuses a manifest older than the
project's files (`check_manifest_current`), checks that the dptool dbt package installed in the project is
the CLI's own version, loads the catalog (declarations, the dbt semantic layer, rule documents from
`--rules-dir`), writes the semantic layer's metric models under models/dptool_semantic/ (gold models `ref`
them), and says which semantic metrics were skipped and why.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from dptool.errors import DptoolError
from dptool.project.catalog import Catalog, load_catalog
from dptool.project.dbt import DbtProject, _project_yml
from dptool.project.parsed_files import parsed_checksums

RULE_DOCS = "_dptool_rule_docs.md"


def rule_documents(rules_dir: str | Path | None, project_dir: Path) -> dict[str, str]:
    """Rule id -> document, from the markdown files of a folder: `<id>.md` or `rule__<id>.md`."""
    if rules_dir is None:
        return {}
    folder = _folder(rules_dir, project_dir)
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


def _folder(rules_dir: str | Path, project_dir: Path) -> Path:
    folder = Path(rules_dir)
    if not folder.is_dir() and not folder.is_absolute() and (project_dir / folder).is_dir():
        return project_dir / folder
    return folder


def prepare_catalog(project: DbtProject, manifest: dict, *, rules_dir: str | Path | None = None,
                    echo: Callable[[str], None] = print) -> Catalog:
    """The catalog of a project about to be generated from; see the module docstring."""
    from dptool.project import semantic

    documents = rule_documents(rules_dir, project.project_dir)
    check_manifest_current(project, manifest, skip=[_folder(rules_dir, project.project_dir)] if rules_dir else [])
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


# What dbt parses of a project (dbt_project.yml keys and their defaults; docs-paths defaults to all of them)
PARSE_PATHS = {"model-paths": "models", "macro-paths": "macros", "seed-paths": "seeds", "test-paths": "tests",
               "snapshot-paths": "snapshots", "analysis-paths": "analyses", "docs-paths": None}
PARSED_SUFFIXES = (".sql", ".py", ".yml", ".yaml", ".md", ".csv")
# what dptool writes into a project (gold, semantic-layer, batch, ablation models; link's proposals): not the user's
WRITTEN = ("models/dptool_gold", "models/dptool_semantic", "models/dptool_batch", "models/dptool_ablation")
WRITTEN_ANYWHERE = "dptool_link_tmp"


TEXT_CHANGED, CHANGED = "its text is not the one dbt parsed", "changed since dbt parsed the project"
OLD_TIME = "its text is not the one dbt parsed, its time older than the parse"


def _file_hashes(text: str) -> set[str]:
    """What dbt's checksum of a file with this text may be: dbt-core 1.10 and 1.11 hash the text stripped, 1.12
    the text with every run of whitespace made one space (parser/read_files.py, normalize_file_contents)."""
    return {hashlib.sha256(t.encode("utf-8")).hexdigest() for t in (text.strip(), " ".join(text.split()))}


def check_manifest_current(project: DbtProject, manifest: dict, skip: list[Path] = ()) -> None:
    """Refuse a manifest that misses a change to the project's own files: questions and the kb would come from
    the old definitions and golds (compiled by dbt, which parses first) from the new.

    A file whose node carries dbt's checksum (models, seeds, singular tests, snapshots, analyses: sha256 of the
    file's text, see `_file_hashes`) is compared by content, whatever its time; so is every other file dbt's
    partial-parse state of that parse has a checksum for (YAML properties, macros, docs blocks: `parsed_checksums`).
    The rest (dbt_project.yml, seeds over dbt's size limit, files dbt did not read, every file when that state is
    missing or another parse's) have their modification time compared with `metadata.generated_at`, which dbt sets
    when it starts a parse, partial or not; a file written since may not be in it. A file the manifest names that
    is gone is missing from the project. dptool's own folders (WRITTEN) are left out, and `skip` (the --rules-dir).
    """
    root = project.project_dir
    parsed = _generated_at(manifest)
    if parsed is None and project.manifest_path.is_file():  # a manifest without the time: when it was written
        parsed = project.manifest_path.stat().st_mtime
    conf = _project_yml(root)
    installed = [root / str(conf.get(key) or default) for key, default in (("packages-install-path", "dbt_packages"),
                                                                          ("log-path", "logs"))]
    read = parsed_checksums(project.manifest_path, manifest, (manifest.get("metadata") or {}).get("project_name"))
    stale = _stale_files(root, manifest, parsed, _parse_roots(conf, root),
                         [*(root / w for w in WRITTEN), project.target_dir, *installed, *skip], read)
    if stale:
        newest, why = max(stale, key=lambda s: (s[2], s[0]))[:2]
        more = f"; {len(stale) - 1} more file{'s' if len(stale) > 2 else ''} changed too" if len(stale) > 1 else ""
        # dbt's partial parse reads a YAML file again only when its time changed: an edit that kept the time
        # needs a full parse
        full = " --no-partial-parse" if any(s[1] == OLD_TIME for s in stale) else ""
        raise DptoolError(f"{project.manifest_path}: older than {newest} ({why}{more}); run `dbt parse{full}` (or "
                          f"`dbt build{full}`) in {root} first")


def _parse_roots(conf: dict, root: Path) -> list[Path]:
    folders = []
    for key, default in PARSE_PATHS.items():
        paths = conf.get(key) or ([default] if default else [])
        folders += [root / p for p in (paths if isinstance(paths, list) else [paths])]
    return sorted(set(folders))


def _stale_files(root: Path, manifest: dict, parsed: float | None, roots: list[Path],
                 skip: list[Path], read: dict[str, str]) -> list[tuple[str, str, float]]:
    """(file relative to root, why it is newer than the manifest, its modification time) of each file at fault;
    `read`: the checksum dbt took of each file it parsed (`parsed_checksums`), where it is known."""
    project = (manifest.get("metadata") or {}).get("project_name")
    checksums, known = {}, set()
    for section in ("nodes", "disabled", "macros", "docs", "sources", "exposures", "metrics", "semantic_models",
                    "saved_queries", "unit_tests", "groups"):
        entries = manifest.get(section) or {}
        for node in (n for v in entries.values() for n in (v if isinstance(v, list) else [v])):
            if not isinstance(node, dict) or node.get("package_name") != project:
                continue
            for key in ("original_file_path", "patch_path"):
                if node.get(key):
                    known.add(node[key].split("://")[-1].replace("\\", "/"))
            checksum = node.get("checksum") or {}
            if section == "nodes" and checksum.get("name") == "sha256" and not node.get("test_metadata"):
                checksums[node["original_file_path"].replace("\\", "/")] = checksum.get("checksum")

    def ours(path: Path) -> bool:  # dptool's, dbt's (target, packages, logs), hidden (.git, .venv), --rules-dir
        return WRITTEN_ANYWHERE in path.parts or path.name.startswith(".") or \
            any(path == s or s in path.parents for s in skip)

    stale: list[tuple[str, str, float]] = []
    files = {root / "dbt_project.yml"} if (root / "dbt_project.yml").is_file() else set()
    known.add("dbt_project.yml")  # no node names it, and every parse read it: it changed, it is never new
    for folder in roots:
        for dirpath, dirnames, filenames in os.walk(folder):
            here = Path(dirpath)
            dirnames[:] = sorted(d for d in dirnames if not ours(here / d))
            files |= {here / f for f in filenames if f.endswith(PARSED_SUFFIXES) and not ours(here / f)}
    for path in sorted(files):
        rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        mtime = path.stat().st_mtime
        newer = parsed is not None and mtime > parsed
        if rel in checksums or rel in read:  # by content: a touched file is current, an edit of any time is not
            text = path.read_bytes().decode("utf-8", errors="replace")
            if checksums.get(rel, read.get(rel)) not in _file_hashes(text):
                stale.append((rel, TEXT_CHANGED if rel in checksums else CHANGED if newer else OLD_TIME, mtime))
        elif newer:
            stale.append((rel, CHANGED if rel in known else
                          "new since dbt parsed the project", mtime))
    for rel in sorted(known):
        path = root / rel
        if not path.exists() and not ours(path):
            stale.append((rel, "deleted since dbt parsed the project", float("inf")))
    return stale


def _generated_at(manifest: dict) -> float | None:
    text = (manifest.get("metadata") or {}).get("generated_at")
    try:
        when = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()
