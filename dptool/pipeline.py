"""`dptool generate`: manifest -> catalog -> graph -> skeletons -> candidates -> dbt -> tasks -> bundle."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

import click

from dptool import __version__
from dptool.catalog import Catalog, load_catalog
from dptool.dbt import DbtProject, dbt_version
from dptool.enrich import NotScorable, answer
from dptool.export import card, write_bundle
from dptool.graph import build_graph, graph_stats, graph_to_json
from dptool.instantiate import instantiate
from dptool.materialize import GOLD_DIR, Built, materialize, write_properties
from dptool.phrase import phrase
from dptool.profile import profile_dimensions
from dptool.sample import enumerate_skeletons, select_skeletons
from dptool.sql import pretty, relation_key, rename_relations, variant_query
from dptool.validate import validate
from dptool.warehouse import Warehouse, dialect_of


@dataclass
class GenerateResult:
    bundle: Path
    tasks: list[dict]
    timings: dict[str, float] = field(default_factory=dict)
    dropped: dict[str, str] = field(default_factory=dict)
    rejected: Counter = field(default_factory=Counter)


class Stages:
    """Times each stage and says what it is doing."""

    def __init__(self, echo: Callable[[str], None]):
        self.echo = echo
        self.timings: dict[str, float] = {}

    @contextmanager
    def __call__(self, name: str, what: str) -> Iterator[None]:
        self.echo(f"[{name}] {what}")
        start = time.perf_counter()
        yield
        self.timings[name] = round(time.perf_counter() - start, 3)


def generate(project_dir: str | Path, out: str | Path, *, seed: int = 42, target_tasks: int = 60,
             profiles_dir: str | None = None, dbt_target: str | None = None,
             echo: Callable[[str], None] = click.echo, progress: bool = True) -> GenerateResult:
    """Generate a benchmark bundle from a dbt project whose data is built (`dbt build` has run)."""
    stage = Stages(echo)
    with stage("load", "reading target/manifest.json"):
        project = DbtProject(project_dir, profiles_dir, dbt_target)
        manifest = project.load_manifest()
        catalog = load_catalog(manifest, str(project.manifest_path))
        connection = project.connection()
        dialect = dialect_of(connection.adapter_type)
    with stage("graph", f"{len(catalog.metrics)} metrics, {len(catalog.rules)} rules, {len(catalog.tables)} tables"):
        graph = build_graph(catalog)
    with stage("sample", "profiling dimensions and selecting task skeletons"):
        with Warehouse.of(connection) as wh:
            profiles = profile_dimensions(catalog, wh)
        cardinality = {k: p.distinct for k, p in profiles.items()}
        selected = select_skeletons(enumerate_skeletons(catalog), catalog, cardinality, target_tasks)
        skeletons = [s for s, _ in selected]
    with stage("instantiate", f"{len(skeletons)} skeletons"):
        candidates = instantiate(skeletons, catalog, profiles, seed, dialect)
    with stage("materialize", f"dbt build of {len(candidates)} gold models and their rule tests"):
        total = len(candidates) + sum(1 for c in candidates if c.rules)
        with click.progressbar(length=total, label="  dbt", file=None if progress else _Null()) as bar:
            built, dropped = materialize(project, candidates, catalog, on_node_done=lambda: bar.update(1))
    with stage("enrich", f"answers of {len(built)} tasks"):
        tasks, gold_rows = [], {}
        with Warehouse.of(connection) as wh:
            mapping = {relation_key(t.relation_name, dialect): (t.domain, t.name) for t in catalog.tables.values()}
            for b in built:
                try:
                    task, rows = _task(b, catalog, wh, mapping, dialect)
                except NotScorable as exc:
                    dropped[b.candidate.task_id] = f"not scorable: {exc}"
                    continue
                tasks.append(task)
                gold_rows[task["task_id"]] = rows
    with stage("phrase", "template phraser (no LLM configured)"):
        by_id = {b.candidate.task_id: b.candidate for b in built}
        for task in tasks:
            task["question"] = phrase(by_id[task["task_id"]], task, catalog)
    with stage("validate", "stage-1 programmatic checks"):
        kept, rejected = validate(tasks, catalog)
        kept_ids = {t["task_id"] for t in kept}
        for task_id in by_id.keys() - kept_ids:  # unscorable or rejected: its model leaves the project
            (project.project_dir / GOLD_DIR / f"{task_id}.sql").unlink(missing_ok=True)
        write_properties(project, [by_id[i] for i in sorted(kept_ids)], catalog,
                         {t["task_id"]: t["question"] for t in kept})
    with stage("export", "writing the bundle"):
        versions = {"dptool": __version__, "dbt-core": dbt_version(), "duckdb": version("duckdb"),
                    "sqlglot": version("sqlglot")}
        text = card(catalog=catalog, tasks=kept, rejected=rejected, dropped=len(dropped),
                    graph_stats=graph_stats(graph), seed=seed, versions=versions)
        bundle = write_bundle(Path(out), catalog=catalog, source_db=connection.path, tasks=kept,
                              gold_rows=gold_rows, graph_json=graph_to_json(graph), card=text)
    return GenerateResult(bundle, kept, stage.timings, dropped, rejected)


def _task(b: Built, catalog: Catalog, wh: Warehouse, mapping: dict, dialect: str) -> tuple[dict, list]:
    c = b.candidate
    metric = catalog.metrics[c.metric]
    columns, rows = wh.query(f"select * from {b.relation_name}")
    result = answer(c, metric, columns, rows)
    order_by = ["rank"] if c.shape == "ranking" else list(c.group_by)
    sqls = {}
    for variant in ("gold", "base"):
        query = variant_query(b.compiled_sql, f"dptool_{variant}", order_by, dialect)
        sqls[variant] = pretty(rename_relations(query, mapping), dialect)
    gold_rows = [tuple(r[1:]) for r in rows if r[0] == "gold"]
    if order_by:
        index = [columns.index(col) - 1 for col in order_by]
        gold_rows.sort(key=lambda r: tuple(r[i] for i in index))
    rule_types = [catalog.rules[r].type for r in c.rules]
    task = {
        "task_id": c.task_id,
        "domain": metric.domain,
        "analysis_type": c.analysis_type,
        "tier": "knowledge+analytics+rule" if c.rules else "knowledge+analytics",
        "question": "",
        "answer_format": result["answer_format"],
        "gold": result["gold"],
        "base": result["base"],
        "tolerance": result["tolerance"],
        "gold_sql": sqls["gold"],
        "base_sql": sqls["base"],
        "metric_ids": [c.metric, *metric.components],
        "rule_ids": list(c.rules),
        "rule_types": rule_types,
        "dimension": c.dimension_column,
        "slice": c.slice,
        "subgraph_id": c.skeleton.id,
        "dbt_node": b.unique_id,
    }
    return task, gold_rows


class _Null:
    def write(self, _):
        pass

    def flush(self):
        pass
