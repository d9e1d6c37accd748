"""`dptool dp`: data products — provenance in dbt docs, DP-Bench JSON, scoring, the baselines, the bench."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import click

from dptool.cli.llm import configured_llm, llm_options
from dptool.cli.options import CommandGroup, Finite, project_options
from dptool.outdir import check_file, write_file
from dptool.progress import heartbeat

NO_DOCS_HELP = "Use target/manifest.json and target/catalog.json as they are; run no dbt command."
EMBED_HELP = "An embedding model for hybrid search, ollama:MODEL; without it the search is BM25 alone."


def _project(project_dir, profiles_dir, dbt_target, locked: str | None = None):
    """The project; with `locked` (the command), its lock held until the command ends: it writes into it."""
    from dptool.project.dbt import DbtProject
    from dptool.project.lock import project_lock

    project = DbtProject(project_dir, profiles_dir, dbt_target)
    if locked:
        click.get_current_context().with_resource(project_lock(project_dir, locked, click.echo))
    return project


def _dialect(project, manifest: dict | None = None) -> str:
    """The target's SQL dialect, from the manifest's metadata (loading dbt's profile is slow)."""
    from dptool.sql import dialect_of

    adapter = ((manifest or project.load_manifest()).get("metadata") or {}).get("adapter_type")
    return dialect_of(adapter or project.connection().adapter_type)


def _catalog_json(project, required: bool = True) -> dict | None:
    from dptool.errors import DptoolError

    path = project.project_dir / "target" / "catalog.json"
    if not path.is_file():
        if not required:
            return None
        raise DptoolError(f"{path}: no catalog; run `dbt build` then `dbt docs generate` (or `dptool dp provenance`)")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DptoolError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None


def _products(project, created: bool | None, docs_generate: bool):
    """The project's data products; `dbt docs generate` first refreshes the compiled SQL and catalog.json."""
    from dptool.dp.products import load_products

    if docs_generate:
        click.echo("[dp] dbt docs generate")
        with heartbeat("dbt docs generate"):
            project.run("docs", "generate")
    manifest = project.load_manifest()
    return load_products(manifest, _catalog_json(project), _dialect(project, manifest), created=created,
                         manifest_path=str(project.manifest_path))


def _embedder(spec: str | None, project_dir, host: str | None, timeout: float):
    from dptool.llm.client import project_llm

    return project_llm(spec, project_dir, host=host, timeout=timeout) if spec else None


@click.group("dp", cls=CommandGroup)
def dp():
    """Data products (DP-Bench): provenance in dbt docs, DP-Bench JSON, scoring, the baselines."""


@dp.command()
@project_options
@click.option("--no-docs-generate", is_flag=True, help=NO_DOCS_HELP)
def provenance(project_dir, profiles_dir, dbt_target, no_docs_generate):
    """Write every data-product column's lineage into its properties file, where dbt docs show it.

    Runs `dbt docs generate` (compiled SQL and catalog.json), traces each data-product model's columns with
    sqlglot, updates the models' properties files, then runs `dbt docs generate` again so `dbt docs serve`
    shows the new descriptions. Run `dbt build` first: lineage needs the tables in catalog.json.
    """
    from dptool.dp.provenance import write_provenance

    project = _project(project_dir, profiles_dir, dbt_target, locked="dptool dp provenance")
    products = _products(project, created=None, docs_generate=not no_docs_generate)
    changed = write_provenance(project.project_dir, products, products.document.dialect)
    columns = [c for m in products.models.values() for c in m.columns.values()]
    edges = Counter(e.type for c in columns for e in c.edges)
    click.echo(f"{len(products.document.data_products)} data products, {len(products.models)} models, "
               f"{len(columns)} columns ({sum(c.derived for c in columns)} derived)")
    click.echo("edges: " + ", ".join(f"{kind} {n}" for kind, n in sorted(edges.items())))
    for path in changed:
        click.echo(f"wrote {path.relative_to(project.project_dir)}")
    if not changed:
        click.echo("every properties file was already up to date")
    elif not no_docs_generate:
        click.echo("[dp] dbt docs generate (the new descriptions)")
        with heartbeat("dbt docs generate"):
            project.run("docs", "generate")
    click.echo(f"view: cd {project.project_dir} && dbt docs serve")


@dp.command()
@project_options
@click.option("--out", default="data_products.json", show_default=True, type=click.Path(dir_okay=False),
              help="The DP-Bench JSON file to write.")
@click.option("--created", is_flag=True, help="Export what `dptool dp create` wrote instead of the hand-made DPs.")
@click.option("--no-docs-generate", is_flag=True, help=NO_DOCS_HELP)
def export(project_dir, profiles_dir, dbt_target, out, created, no_docs_generate):
    """Write the project's data products as a DP-Bench JSON file.

    Runs `dbt docs generate` first (lineage needs every model's compiled SQL and catalog.json).
    """
    from dptool.dp import dpjson

    check_file(out)  # before any work
    project = _project(project_dir, profiles_dir, dbt_target, locked=None if no_docs_generate else "dptool dp export")
    document = _products(project, created=created, docs_generate=not no_docs_generate).document
    write_file(out, dpjson.dumps(document))
    derived = sum(len(p.derived_columns()) for p in document.data_products)
    click.echo(f"{len(document.data_products)} data products ({derived} derived columns, "
               f"{sum(len(p.questions) for p in document.data_products)} questions) -> {out}")


@dp.command("import")
@project_options
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--out-dir", default=None, type=click.Path(file_okay=False),
              help="Where the models go. Default: models/dptool_dp in the project.")
def import_(project_dir, profiles_dir, dbt_target, file, out_dir):
    """Write the data products of a DP-Bench JSON file as dbt models over the project's tables."""
    from dptool.dp import dpjson
    from dptool.dp.create import DEFAULT_OUT, relation_refs, write_models
    from dptool.errors import DptoolError
    from dptool.project.catalog import load_catalog

    project = _project(project_dir, profiles_dir, dbt_target, locked="dptool dp import")
    manifest = project.load_manifest()
    refs = relation_refs(manifest, load_catalog(manifest, str(project.manifest_path)))
    document = dpjson.read(file)
    target = Path(out_dir) if out_dir else project.project_dir / DEFAULT_OUT
    for product in document.data_products:
        db = document.databases.get(product.db_id)
        if db is None:
            raise DptoolError(f"{file}: data product {product.id!r} names database {product.db_id!r}, which the file "
                              "does not describe")
        written = write_models(product, db, refs, target, _dialect(project, manifest), document.dialect, "import")
        click.echo(f"{product.id}: {len(written)} files in {written[0].parent}")
    click.echo(f"build: dbt build --select tag:dptool_dp --project-dir {project.project_dir}")


@dp.command("score")
@click.argument("pred", type=click.Path(exists=True, dir_okay=False))
@click.argument("gold", type=click.Path(exists=True, dir_okay=False))
@click.option("--out", default=None, type=click.Path(dir_okay=False), help="Also write the full report as JSON.")
@click.option("--hard-min-columns", default=50, show_default=True, type=click.IntRange(1),
              help="A database with at least this many columns puts its data products in the Hard subset.")
@click.option("--gold-id", default=None,
              help="Score PRED's one data product (or the one of this id) against this gold data product alone, "
                   "whatever its id (what `dp create` wrote). Default: each gold against the prediction of its id.")
def score_(pred, gold, out, hard_min_columns, gold_id):
    """Score PRED against GOLD (DP-Bench JSON files) with DP-Bench §5's metrics.

    Derived columns are read from their SQL, qualified against GOLD's database: their source columns are the
    columns that SQL reads, whatever the file claims. One whose SQL does not parse, names what the database
    lacks or reads none of its tables scores 0 (the reason is printed); one that only copies a column counts as
    a non-derived column.
    """
    from dptool.dp import dpjson
    from dptool.dp.score import score

    if out:
        check_file(out)  # before any work
    report = score(dpjson.read(pred), dpjson.read(gold), hard_min_columns, gold_id)
    if gold_id is not None:
        click.echo(f"{pred} against gold data product {gold_id}")
    for hard in (False, True):
        summary = report.summary(hard_only=hard)
        if hard and not summary["data_products"]:
            click.echo(report.empty_hard())
            continue
        click.echo(f"{'All' if not hard else 'Hard subset'}: {summary['data_products']} data products")
        click.echo(f"  {'':<26}{'P':>7}{'R':>7}{'F1':>7}{'n':>5}")
        for key, name in (("non_derived", "columns, non-derived"), ("with_provenance", "columns, incl. derived"),
                          ("derived", "derived (soft)")):
            part = summary[key]
            if part["n"]:
                p, r, f1 = part["precision"], part["recall"], part["f1"]
                click.echo(f"  {name:<26}{p:>7.3f}{r:>7.3f}{f1:>7.3f}{part['n']:>5}")
            else:
                click.echo(f"  {name:<26}{'—':>7}{'—':>7}{'—':>7}{0:>5}")
        ex = summary["execution_accuracy_oracle"]
        if ex["questions"]:
            click.echo(f"  execution accuracy (oracle): {ex['answerable']}/{ex['questions']} = {ex['accuracy']:.1%}")
    for s in report.scores:
        for column, why in s.rejected:
            click.echo(f"{s.dp_id}.{column} scores 0: {why}")
        for column, copied in s.copies:
            click.echo(f"{s.dp_id}.{column} only copies {copied}: scored as a non-derived column")
    if report.unmatched:
        click.echo(f"predicted data products with no gold (ignored): {', '.join(report.unmatched)}")
    if out:
        write_file(out, json.dumps(report.to_dict(), indent=2, sort_keys=True) + "\n")
        click.echo(f"report -> {out}")


@dp.command()
@project_options
@click.argument("request")
@click.option("--method", type=click.Choice(["hybrid", "llm"]), default="hybrid", show_default=True,
              help="hybrid: DP-Bench §6.1 column search; llm: §6.2 (needs --llm).")
@click.option("--domain", default=None, help="The database (domain) to build from; needed when there are several.")
@click.option("--name", default=None, help="The data product's id and model-name prefix. Default: from the request.")
@click.option("--threshold", default=None, type=Finite(),
              help="Hybrid search cut-off. Default: 0.75 with an embedding model, 0.2 for BM25 alone.")
@llm_options
@click.option("--embed-model", default=None, envvar="DPTOOL_EMBED_MODEL", help=EMBED_HELP)
@click.option("--out-dir", default=None, type=click.Path(file_okay=False),
              help="Where the models go. Default: models/dptool_dp in the project.")
def create(project_dir, profiles_dir, dbt_target, request, method, domain, name, threshold, llm, ollama_host,
           llm_timeout, embed_model, out_dir):
    """Create a data product for REQUEST and write it as dbt models (and a DP-Bench JSON file beside them).

    Reads the agent-visible tables from target/manifest.json, their types from target/catalog.json when
    there. Then `dbt build --select tag:dptool_dp` materializes the data product.
    """
    import hashlib

    from dptool.dp.baselines import HybridSearch, llm_create
    from dptool.dp.create import DEFAULT_OUT, relation_refs, slug, write_models
    from dptool.dp.products import databases
    from dptool.errors import DptoolError
    from dptool.project.catalog import load_catalog

    project = _project(project_dir, profiles_dir, dbt_target, locked="dptool dp create")
    manifest = project.load_manifest()
    catalog = load_catalog(manifest, str(project.manifest_path))
    dbs = databases(catalog, _catalog_json(project, required=False))
    if domain is None:
        if len(dbs) != 1:
            raise DptoolError(f"the project has {len(dbs)} databases ({', '.join(sorted(dbs))}); pass --domain")
        domain = next(iter(dbs))
    if domain not in dbs:
        raise DptoolError(f"--domain {domain!r}: no agent-visible tables there (domains: {', '.join(sorted(dbs))})")
    db = dbs[domain]
    dp_id = slug(name) if name else "dp_" + hashlib.sha256(request.encode()).hexdigest()[:8]
    _refuse_taken_id(manifest, dp_id, name)
    dialect = _dialect(project, manifest)
    request = " ".join(request.split())
    if method == "llm":
        client = configured_llm(llm, str(project.project_dir), ollama_host, llm_timeout)
        if client is None:
            raise DptoolError("--method llm needs an LLM: --llm ollama:MODEL, $DPTOOL_LLM or dbt_project.yml "
                              "vars.dptool.llm")
        result = llm_create(client, db, dp_id, request, dialect)
        product, created_by = result.product, "llm"
        click.echo(f"{client.name}, prompt {result.prompt}, {result.attempts} replies")
        for dropped in result.dropped:
            click.echo(f"dropped (not in the database): {dropped}")
    else:
        search = HybridSearch(db, _embedder(embed_model, project.project_dir, ollama_host, llm_timeout), threshold)
        product, created_by = search.create(dp_id, request), "hybrid_search"
        click.echo(f"{search.label}, threshold {search.threshold:g}")
    target = Path(out_dir) if out_dir else project.project_dir / DEFAULT_OUT
    written = write_models(product, db, relation_refs(manifest, catalog), target, dialect, dialect, created_by)
    columns = len(product.columns())
    click.echo(f"data product {dp_id}: {columns} columns, {len(product.derived_columns())} derived columns "
               f"from {len(product.tables)} tables")
    for path in written:
        click.echo(f"  {path}")
    click.echo(f"build: dbt build --select tag:dptool_dp --project-dir {project.project_dir}")


def _refuse_taken_id(manifest: dict, dp_id: str, name: str | None) -> None:
    """A created data product writes its own id: one of a hand-made data product would make two data products of
    one id (each declaring a request), and `dp provenance` and `dp export` would refuse the project."""
    from dptool.dp.products import declaration
    from dptool.errors import DptoolError

    for node in (manifest.get("nodes") or {}).values():
        decl = declaration(node) if node.get("resource_type") == "model" else None
        if decl and not decl.get("created_by") and str(decl.get("id") or node["name"]) == dp_id:
            where = (node.get("patch_path") or node.get("original_file_path") or "?").split("://")[-1]
            raise DptoolError(f"--name {name or dp_id}: data product {dp_id!r} is one of the project's own ({where}: "
                              f"{node['unique_id']}); dp create writes its own id: choose another --name (to score "
                              f"it against {dp_id}: `dptool dp score PRED GOLD --gold-id {dp_id}`)")


@dp.command()
@project_options
@click.option("--gold", default=None, type=click.Path(exists=True, dir_okay=False),
              help="A DP-Bench file to benchmark against. Default: the project's data products.")
@llm_options
@click.option("--embed-model", default=None, envvar="DPTOOL_EMBED_MODEL", help=EMBED_HELP)
@click.option("--threshold", default=None, type=Finite(),
              help="Hybrid search cut-off. Default: 0.75 with an embedding model, 0.2 for BM25 alone.")
@click.option("--hard-min-columns", default=50, show_default=True, type=click.IntRange(1),
              help="A database with at least this many columns puts its data products in the Hard subset.")
@click.option("--bundle", default=None, type=click.Path(exists=True, file_okay=False),
              help="A `dptool generate` bundle: its tasks that a gold data product can answer join its questions.")
@click.option("--out", default="dp_bench", show_default=True, type=click.Path(file_okay=False),
              help="Folder for dp_bench.md, dp_bench.json and each method's predictions.")
@click.option("--no-docs-generate", is_flag=True, help=NO_DOCS_HELP)
def bench(project_dir, profiles_dir, dbt_target, gold, llm, ollama_host, llm_timeout, embed_model, threshold,
          hard_min_columns, bundle, out, no_docs_generate):
    """Run the baselines over the data product requests and score them: DP-Bench Tables 2, 4 and 6 in one.

    Rows: no search, hybrid search, the LLM (with --llm) and the ground truth. The gold is the project's
    data products (after `dbt docs generate`, as `dp export`), or --gold.
    """
    from dptool.dp import bench as bench_module
    from dptool.dp import dpjson

    bench_module.check_out(out)  # before any work: the files it writes there must be absent or dptool's
    if gold:
        document = dpjson.read(gold)
    else:
        project = _project(project_dir, profiles_dir, dbt_target,
                           locked=None if no_docs_generate else "dptool dp bench")
        document = _products(project, created=False, docs_generate=not no_docs_generate).document
        project_dir = project.project_dir
    if bundle:
        document, added = bench_module.add_bundle_questions(document, bundle)
        click.echo(f"[bench] {added} tasks of {bundle} join the questions of the data products that answer them")
    client = configured_llm(llm, str(project_dir), ollama_host, llm_timeout)
    if client is None:
        click.echo("[bench] no LLM configured (--llm, $DPTOOL_LLM or vars.dptool.llm): the LLM row is left out")
    else:
        click.echo(f"[bench] LLM {client.name}")
    if not embed_model:
        click.echo("[bench] no embedding model (--embed-model or DPTOOL_EMBED_MODEL): hybrid search is BM25 alone")
    embedder = _embedder(embed_model, project_dir, ollama_host, llm_timeout)
    results = bench_module.run(document, llm=client, embedder=embedder, threshold=threshold,
                               hard_min_columns=hard_min_columns, echo=click.echo)
    written = bench_module.write(results, out, hard_min_columns)
    click.echo("")
    click.echo(bench_module.markdown(results, hard_min_columns))
    for r in results:
        for note in r.notes:
            click.echo(f"  {r.label}: {note}")
    click.echo(f"-> {written[0]}, {written[1]}")
