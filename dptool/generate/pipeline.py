"""`dptool generate`: manifest -> catalog -> graph -> skeletons -> candidates -> dbt -> tasks -> bundle."""

from __future__ import annotations

import json
import re
import shutil
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

import click

from dptool import __version__
from dptool.bundle import read_record
from dptool.errors import DptoolError
from dptool.generate.aliases import note as alias_note
from dptool.generate.aliases import one_to_one
from dptool.generate.enrich import NotScorable, answer
from dptool.generate.export import Reproduction, card, describe, describe_task, write_bundle
from dptool.generate.graph import build_graph, graph_stats, graph_to_json
from dptool.generate.ids import Ids, knowledge_key
from dptool.generate.instantiate import constant_notes, instantiate, plausible_types
from dptool.generate.knowledge import knowledge_gaps, knowledge_tasks
from dptool.generate.materialize import GOLD_DIR, NO_EFFECT, Built, materialize, write_models
from dptool.generate.minimum import read_setting
from dptool.generate.parity import check_parity
from dptool.generate.phrase import phrase
from dptool.generate.probe import probe
from dptool.generate.profile import profile_dimensions, unmatched_conditions
from dptool.generate.proofs import read_proofs
from dptool.generate.refresh import diff, markdown, read_tasks, reasked, settings_line
from dptool.generate.sample import enumerate_skeletons, quality, select_skeletons
from dptool.generate.support import entity_lines, support_texts, supports
from dptool.generate.support import setting as support_setting
from dptool.generate.untasked import absent_types, untasked
from dptool.generate.validate import duplicate_questions, identifiers, issues, validate
from dptool.outdir import BUNDLE, check_replaceable
from dptool.progress import progressbar
from dptool.project.catalog import Catalog
from dptool.project.dbt import DbtProject, dbt_version
from dptool.project.digests import snapshot
from dptool.project.lock import project_lock
from dptool.project.prepare import manifest_behind_generated, prepare_catalog
from dptool.project.scaffold import SCAFFOLD_TODO
from dptool.project.selects import unwindowed
from dptool.project.semantic import GENERATED_DIR as SEMANTIC_DIR
from dptool.project.warehouse import Warehouse
from dptool.sql import SharedQuery, VariantWriter, dialect_of, relation_key


@dataclass
class GenerateResult:
    bundle: Path
    tasks: list[dict]
    timings: dict[str, float] = field(default_factory=dict)
    dropped: dict[str, str] = field(default_factory=dict)
    rejected: Counter = field(default_factory=Counter)
    review: object | None = None  # dptool.generate.judge.Review when an LLM phrased and judged
    llm_usage: dict[str, object] = field(default_factory=dict)  # stage -> dptool.llm.client.Usage
    dbt_seconds: float = 0.0  # of the stages' time, spent inside dbt's runner
    dbt_cpu_seconds: float = 0.0  # CPU seconds of this process meanwhile
    cpu_timings: dict[str, float] = field(default_factory=dict)  # CPU seconds of each stage, all threads
    rows: dict[str, tuple[list[str], list[tuple]]] = field(default_factory=dict)  # task id -> columns, rows read
    warnings: list[str] = field(default_factory=list)  # metrics and rules none of whose candidates ran (SQL errors)
    gold_models: int = 0  # candidates dbt compiled, over every round (the benchmark's cost per gold model)
    # what each step ran and kept over every round: skeletons probed, gold models compiled, gold and support
    # queries run, tasks with SQL kept, rounds (the benchmark's candidates run vs kept)
    counts: dict[str, int] = field(default_factory=dict)


class NoTask(DptoolError):
    """A run that made no task: its warnings say each metric's cause (the CLI prints them before the error)."""

    def __init__(self, warnings: list[str]):
        self.warnings = warnings
        setting = any("dptool_min_support" in w for w in warnings)
        super().__init__("no task made, no bundle written: each metric's cause is a warning above" + (
            "; the setting that changes it: the dbt var dptool_min_support in the vars of dbt_project.yml "
            "(docs/your-project.md, \"Minimum support\")" if setting else ""))


class Stages:
    """Times each stage and says what it is doing."""

    def __init__(self, echo: Callable[[str], None]):
        self.echo = echo
        self.timings: dict[str, float] = {}
        self.cpu: dict[str, float] = {}  # on a busy machine, CPU seconds say more than wall seconds

    @contextmanager
    def __call__(self, name: str, what: str) -> Iterator[None]:
        self.echo(f"[{name}] {what}")
        start, cpu = time.perf_counter(), time.process_time()
        yield
        self.timings[name] = round(time.perf_counter() - start, 3)
        self.cpu[name] = round(time.process_time() - cpu, 3)


# the folders a run writes into the project, kept as the last good run left them until a run completes
GENERATED = (GOLD_DIR, Path("models") / SEMANTIC_DIR)
KEPT = "dptool_last_good"  # in the target folder, where dbt parses nothing: the folders while a run writes new ones
KEPT_LIST = "folders.json"


@contextmanager
def last_good(project: DbtProject, folders: tuple[Path, ...], echo: Callable[[str], None] = click.echo,
              ) -> Iterator[None]:
    """Run the block with `folders` (relative to the project) moved aside; delete them if it completes, put
    them back if it does not (an error, Ctrl-C), so the project holds the last good run's, never a partial run's.

    Aside, dbt does not parse them while the run compiles its own. A run killed outright (SIGKILL, power loss)
    leaves them aside, with the list of what was moved: the next run puts them back first.
    """
    keep = project.target_dir / KEPT
    if (keep / KEPT_LIST).is_file():
        echo(f"  note: putting back {', '.join(map(str, folders))} as the last good run left them "
             f"(an earlier run was killed; they waited in {keep})")
        _put_back(project, keep)
    shutil.rmtree(keep, ignore_errors=True)
    keep.mkdir(parents=True)
    present = [str(f) for f in folders if (project.project_dir / f).exists()]
    # the list first: a run killed while moving still says which folders existed; written whole or not at all (a run
    # killed while writing it left an empty list that every later run failed to read)
    listing = keep / f".{KEPT_LIST}.tmp"
    listing.write_text(json.dumps({"folders": [str(f) for f in folders], "present": present}), encoding="utf-8")
    listing.replace(keep / KEPT_LIST)
    try:
        for rel in present:
            # its parent first: without it shutil.move copies and deletes (a rename needs the parent), and a Ctrl-C
            # during the copy put the partial copy back in place of the folder
            (keep / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.move(project.project_dir / rel, keep / rel)
        yield
    except BaseException:
        _put_back(project, keep)
        raise
    shutil.rmtree(keep, ignore_errors=True)


def _put_back(project: DbtProject, keep: Path) -> None:
    """Replace the folders a run wrote with those `last_good` kept in `keep` (a second Ctrl-C waits for it)."""
    main = threading.current_thread() is threading.main_thread()
    before = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        try:
            listed = json.loads((keep / KEPT_LIST).read_text(encoding="utf-8"))
        except ValueError:  # cut while it was written, before anything was moved: nothing to put back
            listed = {"folders": [], "present": []}
        for rel in listed["folders"]:
            if rel in listed["present"] and not (keep / rel).exists():
                continue  # not moved aside yet when the run stopped: it is where it was
            shutil.rmtree(project.project_dir / rel, ignore_errors=True)
            if rel in listed["present"]:
                (project.project_dir / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.move(keep / rel, project.project_dir / rel)
        shutil.rmtree(keep, ignore_errors=True)
    finally:
        if main and before is not None:
            signal.signal(signal.SIGINT, before)


SQL_TYPES = ("point_query", "trend_analysis", "comparison", "ranking", "significance_testing", "threshold_crossing",
             "counterfactual", "decomposition")
AUGMENT_ROUNDS = 3


@dataclass
class Round:
    """What one materialize round kept: tasks, their candidates and gold rows."""

    tasks: list[dict] = field(default_factory=list)
    candidates: list = field(default_factory=list)
    gold_rows: dict[str, list] = field(default_factory=dict)
    gold_queries: dict[str, SharedQuery] = field(default_factory=dict)  # each gold_sql with the CTEs it shares
    rows: dict[str, tuple[list[str], list[tuple]]] = field(default_factory=dict)  # both variants, as read
    dropped: dict[str, str] = field(default_factory=dict)
    rejected: Counter = field(default_factory=Counter)
    reasons: dict[str, str] = field(default_factory=dict)  # task id -> why its candidate was dropped
    drops: list[tuple[str, str]] = field(default_factory=list)  # (reason, what the candidate was), for the card
    sql_errors: list[tuple] = field(default_factory=list)  # (candidate, message) of each whose SQL failed

    def add(self, more: Round) -> None:
        """Take in what a later round kept and dropped."""
        self.tasks += more.tasks
        self.candidates += more.candidates
        self.gold_rows.update(more.gold_rows)
        self.gold_queries.update(more.gold_queries)
        self.rows.update(more.rows)
        self.dropped.update(more.dropped)
        self.rejected.update(more.rejected)
        self.reasons.update(more.reasons)
        self.drops += more.drops
        self.sql_errors += more.sql_errors


def generate(project_dir: str | Path, out: str | Path, *, seed: int = 42, target_tasks: int = 60,
             min_per_type: int = 10, profiles_dir: str | None = None, dbt_target: str | None = None,
             refresh: str | Path | None = None, echo: Callable[[str], None] = click.echo,
             progress: bool = True, rules_dir: str | Path | None = None, llm=None) -> GenerateResult:
    """Generate a benchmark bundle from a dbt project whose data is built (`dbt build` has run).

    With `refresh`, the earlier bundle there is compared with the new one: refresh.md and refresh.json
    in the new bundle say which golds changed, which tasks were dropped and why, which were added.
    With `llm` (a `dptool.llm.client.LLM`), questions are phrased by the model, judged on DI-Bench's eight
    dimensions and rewritten once where only the phrasing failed; without it, templates and stage 1.
    """
    out = check_replaceable(out, BUNDLE)  # before any work: a user's folder is refused, an unwritable one too
    project = DbtProject(project_dir, profiles_dir, dbt_target)
    # how the bundle is made, recorded in it (bundle.json): `--refresh` makes the next one the same way
    made_with = {"target": target_tasks, "min_per_type": min_per_type, "seed": seed,
                 "rules_dir": str(rules_dir) if rules_dir is not None else None,
                 "llm": llm.name if llm is not None else None, "dbt_target": dbt_target}
    # one run at a time in a project; a run that does not complete leaves the project's folders as they were
    with project_lock(project.project_dir, "dptool generate", echo), last_good(project, GENERATED, echo), \
            ExitStack() as stack:
        return _generate(project, out, seed=seed, target_tasks=target_tasks, min_per_type=min_per_type,
                         refresh=refresh, echo=echo, progress=progress, rules_dir=rules_dir, llm=llm,
                         made_with=made_with, stack=stack)


def _applied(task: dict) -> list[str]:
    """Every rule a task's gold model applies to either variant (a counterfactual's base applies the withdrawn one)."""
    spec = task.get("spec") or {}
    return list(dict.fromkeys([*task["rule_ids"], *(task.get("rules_in_force") or []),
                               *(spec.get("base_rules") or [])]))


def _generate(project: DbtProject, out: Path, *, seed, target_tasks, min_per_type, refresh, echo, progress, rules_dir,
              llm, made_with, stack: ExitStack) -> GenerateResult:
    stage = Stages(echo)
    old_tasks = read_tasks(refresh) if refresh else None
    if llm is not None:
        with stage("llm", f"{llm.name} at {llm.host}: phrase, judge and rewrite"):
            llm.ensure_model()
    with stage("load", "reading target/manifest.json"):
        manifest = project.load_manifest()
        catalog = prepare_catalog(project, manifest, rules_dir=rules_dir, echo=echo)  # + semantic-layer models
        unwritten = unwritten_rules(catalog, manifest)
        unasked = unwindowed(catalog)  # a metric that selects members and states no window: no task
        for line in unwritten + list(unasked.values()):
            echo(f"  {line}")
        connection = project.connection()
        dialect = dialect_of(connection.adapter_type)
        minimum = read_setting(project.project_dir, catalog.project)  # what each group an answer reads rests on
        for line in entity_lines(catalog, minimum):
            echo(f"  {line}")
    with stage("graph", f"{len(catalog.metrics)} metrics, {len(catalog.rules)} rules, {len(catalog.tables)} tables"):
        graph = build_graph(catalog)
    reviewer = None
    if llm is not None:
        from dptool.generate.judge import Reviewer

        reviewer = Reviewer(llm, catalog)
    with stage("sample", "profiling dimensions and selecting task skeletons"):
        with Warehouse.of(connection) as wh:
            profiles = profile_dimensions(catalog, wh)
            conditions = unmatched_conditions(catalog, wh, manifest)
            proofs = read_proofs(manifest, catalog, wh)
            aliases = one_to_one(catalog, wh, profiles)  # brand_id and brand_name: one question, not two
        for line in alias_note(catalog, aliases) + constant_notes(catalog):
            echo(f"  {line}")
        for line in conditions:
            echo(f"  {line}")
        if proofs.unchanged:
            echo(f"  note: {len(proofs.unchanged)} rule links change nothing on this data (their catalog-level "
                 "proofs warn; card.md lists them): " + ", ".join(f"{r} -> {m}" for r, m in proofs.unchanged))
        cardinality = {k: p.distinct for k, p in profiles.items()}
        catalog.dimension_weight = {k: sum(n for *_, n in p.months) or sum(n for _, n in p.top_values)
                                    for k, p in profiles.items()}
        pool = [s for s in enumerate_skeletons(catalog) if s.dimension not in aliases and s.metric not in unasked]
        # the target is shared equally by the domains: one domain's many rule subsets must not crowd out
        # another's (each domain is its own connected part of the graph, so MMR runs per domain)
        share = -(-target_tasks // max(1, len(catalog.domains)))

        def planned(s):  # a target counts candidates: types a skeleton cannot make do not count
            return plausible_types(s, catalog, cardinality, support=True, min_rows=minimum.rows)

        skeletons = [s for d in catalog.domains for s, _ in select_skeletons(
            [s for s in pool if catalog.metrics[s.metric].domain == d], catalog.subset(d), cardinality, share,
            planned)]
    probes: dict = {}
    # the ephemeral models the probes and every round's gold and support queries inline: computed once, until the
    # last round is done
    rounds = stack.enter_context(ExitStack())
    rounds.enter_context(Warehouse.keeping(connection))

    def probe_more(more: list) -> None:
        fresh = [s for s in more if s.rules and s.id not in probes]
        probes.update(probe(project, fresh, catalog, profiles, connection, dialect))

    with stage("probe", f"where the rules of {sum(1 for s in skeletons if s.rules)} skeletons change their metric"):
        probe_more(skeletons)  # the earlier run's gold models wait in target/ (last_good): dbt parses none of them
    parity = None
    if catalog.semantic is not None and catalog.semantic.metrics:
        with stage("parity", "the semantic layer's metrics computed by MetricFlow too"):
            parity = check_parity(project, catalog, connection, {k: p.encoding for k, p in profiles.items()})
            echo(f"  {parity.summary()}")
    ids = Ids()  # every id of the run: the same question gets the same id, two questions never one
    with stage("instantiate", f"{len(skeletons)} skeletons"):
        refused: list = []  # (reason, candidate) of each whose slice value no question can say
        candidates = instantiate(skeletons, catalog, profiles, seed, dialect, probes=probes, ids=ids, support=True,
                                 min_rows=minimum.rows, refused=refused)
    with stage("warehouse", "the agent-visible tables copied into the bundle's warehouse"):
        # written now: each round's gold_sql is reproduced on it while the next round compiles
        staged = stack.enter_context(Reproduction(out, catalog, connection))
    counts = Counter()

    def run_round(more: list) -> Round:
        made = _round(project, more, catalog, connection, dialect, progress, reviewer, minimum, counts)
        staged.submit(made.tasks, made.gold_rows, made.gold_queries)
        return made

    with stage("materialize", f"dbt compile of {len(candidates)} gold models, their SQL run on the target"):
        done = run_round(candidates)
        tried = list(candidates)
    with stage("augment", f"raising every analysis type to {min_per_type} per domain"):
        used = {(c.skeleton.id, c.analysis_type) for c in candidates}
        for round_ in range(AUGMENT_ROUNDS):
            extra, more_options = _augmentation(done.tasks, pool, used, catalog, profiles, cardinality, seed,
                                                dialect, min_per_type, ids, probes, probe_more, 2 ** round_,
                                                minimum.rows, refused)
            if not extra:
                if more_options:
                    continue  # none of the options tried gave a candidate: the next round tries the next ones
                break
            used |= {(c.skeleton.id, c.analysis_type) for c in extra}
            tried += extra
            done.add(run_round(extra))
        unaskable: dict[str, str] = {}
        if old_tasks is not None:
            # every question of the old bundle that this run did not ask, and the project still can, is asked
            # again: after the fresh sample, so that a refresh is the bundle a fresh run writes plus those
            again, unaskable = reasked(old_tasks, catalog, profiles, ids)
            again = [c for c in again if c.metric not in unasked]
            if again:
                tried += again
                done.add(run_round(again))
        _drop_duplicates(done)
        done.drops += [(why, describe(c)) for why, c in refused]
    rounds.close()
    warnings = failing_sources(tried, done.sql_errors)  # the CLI prints them with its summary, --quiet or not
    warnings = [f"warning: {w}" for w in getattr(catalog.semantic, "warnings", [])] + unwritten + \
        list(unasked.values()) + conditions + warnings
    with stage("knowledge", "tasks from the rule documents and the metric catalog"):
        # a refused metric's catalog entry asks nothing either: its definition lacks the selection's window
        known = [t for t in knowledge_tasks(catalog) if t["rule_ids"] or not set(t["metric_ids"]) & set(unasked)]
        for line in knowledge_gaps(catalog):
            echo(f"  {line}")
        for task in known:
            task["task_id"] = ids(knowledge_key(task))
        kept, rejected = reviewer(known) if reviewer else validate(known, catalog)
        done.rejected.update(rejected)
        kept_ids = {t["task_id"] for t in kept}
        for t in known:
            if t["task_id"] not in kept_ids:
                done.reasons[t["task_id"]] = _rejection(t, catalog, reviewer)
                done.drops.append((done.reasons[t["task_id"]], describe_task(t)))
        known = kept
        tasks = sorted(known + done.tasks, key=lambda t: t["task_id"])
        warnings += untasked(catalog, tasks, pool, tried, done.dropped, done.reasons, warnings, proofs.unchanged,
                             minimum)
        warnings += absent_types(catalog, tasks, SQL_TYPES, tried, done.dropped, done.reasons, profiles, minimum)
        warnings += parity.warnings() if parity is not None else []
        models = write_models(project, sorted(done.candidates, key=lambda c: c.task_id), catalog,
                              {t["task_id"]: t["question"] for t in tasks}, out=out,
                              previous=project.target_dir / KEPT / GOLD_DIR, records={t["task_id"]: t for t in tasks})
        # The gold models are left to the next dbt command's parse (dptool's catalog leaves them out; parsing them
        # cost a quarter of generate: none passes dbt's static parser); what `dptool graph` and `ablate` read
        # from target/manifest.json, the semantic layer's models and rule documents, is parsed when it changed.
        if manifest_behind_generated(project, manifest):
            project.run("parse")
            manifest = project.load_manifest()  # the semantic layer's metric models are in it now
    if not tasks:  # a bundle of no task is no benchmark: the run fails and the last good bundle and models stay
        raise NoTask(warnings)
    support = support_setting(catalog, tasks, minimum)  # the minimum support the card and the kb state
    with stage("export", "writing the bundle"):
        versions = {"dptool": __version__, "dbt-core": dbt_version(), "duckdb": version("duckdb"),
                    "sqlglot": version("sqlglot")}
        llm_card = None
        extra = {}
        if reviewer is not None:
            from dptool.generate.judge import review_jsonl

            llm_card = {"model": llm.name, "prompts": {n: p.label for n, p in reviewer.prompts.items()},
                        "usage": llm.usage, "review": reviewer.review}
            extra["judge.jsonl"] = review_jsonl(reviewer.review)
        text = card(catalog=catalog, tasks=tasks, rejected=done.rejected, dropped=len(done.dropped),
                    graph_stats=graph_stats(graph), seed=seed, versions=versions,
                    domain_graphs={d: graph_stats(build_graph(catalog.subset(d))) for d in catalog.domains},
                    llm=llm_card, drops=done.drops, min_per_type=min_per_type, proofs=proofs, warnings=warnings,
                    parity=parity, support=support)
        if old_tasks is not None:
            changes = diff(old_tasks, tasks, metrics=catalog.metrics, rules=catalog.rules, made=ids.by_key,
                           reasons=done.reasons, unaskable=unaskable)
            changes["made_with"] = {"old": (read_record(refresh) or {}).get("made_with"), "new": made_with}
            extra.update({"refresh.json": json.dumps(changes, indent=2, ensure_ascii=False, sort_keys=True) + "\n",
                          "refresh.md": markdown(changes, str(refresh), settings_line(changes["made_with"]))})
        record = {
            "made_with": made_with, "versions": versions, "manifest_sha256": catalog.manifest_hash,
            "project": {"name": catalog.project, "dir": str(project.project_dir)},
            "dbt": {"models": models, "metrics": {m: catalog.metrics[m].unique_id for t in tasks if t["gold_sql"]
                                                  for m in t["metric_ids"]}, "reads": snapshot(
                manifest, {catalog.metrics[m].unique_id for t in tasks if t["gold_sql"] for m in t["metric_ids"]},
                {catalog.rules[r].unique_id for t in tasks if t["gold_sql"] for r in _applied(t)})},
            "id_collisions": ids.collisions,
        }
        bundle = write_bundle(Path(out), catalog=catalog, source_db=connection, tasks=tasks,
                              gold_rows=done.gold_rows, gold_queries=done.gold_queries,
                              graph_json=graph_to_json(graph), card=text, extra_files=extra, record=record,
                              support=support, staged=staged)
    counts.update(probed=len(probes), kept=sum(1 for t in tasks if t["gold_sql"]))
    order = ("probed", "gold_compiled", "gold_run", "support_run", "validated", "kept", "rounds")
    return GenerateResult(bundle, tasks, stage.timings, done.dropped, done.rejected,
                          reviewer.review if reviewer else None, dict(llm.usage) if llm else {},
                          dbt_seconds=round(project.dbt_seconds, 3),
                          dbt_cpu_seconds=round(project.dbt_cpu_seconds, 3), cpu_timings=stage.cpu, rows=done.rows,
                          warnings=warnings, gold_models=len(tried), counts={k: counts[k] for k in order})


def unwritten_rules(catalog: Catalog, manifest: dict) -> list[str]:
    """Rules whose document is still `dptool rule new`'s scaffold (its TODO), a warning each. A scaffold left as it
    is, its macro returning q unchanged, changes nothing: it leaves the catalog (no task, no kb/rules/ document)."""
    macros = manifest.get("macros") or {}
    lines = []
    for rule_id, rule in sorted(catalog.rules.items()):
        if SCAFFOLD_TODO not in rule.document:
            continue
        if _unchanged_scaffold((macros.get(rule.unique_id) or {}).get("macro_sql") or ""):
            del catalog.rules[rule_id]
            lines.append(f"warning: rule {rule_id} ({rule.unique_id}) is still the `dptool rule new` scaffold: its "
                         "macro returns q unchanged and its document is a TODO, so it is left out (no task, no "
                         "kb/rules/ document) until both are written")
        else:
            lines.append(f"warning: rule {rule_id} ({rule.unique_id}): its document is still the `dptool rule new` "
                         f"scaffold (TODO): kb/rules/{rule_id}.md tells an agent nothing of the rule")
    return lines


def _unchanged_scaffold(macro_sql: str) -> bool:
    """Whether a rule macro only returns its spec: `{{ return(q) }}` and comments."""
    body = re.sub(r"\{#.*?#\}", "", macro_sql, flags=re.DOTALL)
    body = re.sub(r"\{%-?\s*(?:end)?macro\b.*?-?%\}", "", body, flags=re.DOTALL)
    return re.fullmatch(r"\s*\{\{-?\s*return\(\s*q\s*\)\s*-?\}\}\s*", body) is not None


def _round(project, candidates, catalog, connection, dialect, progress, reviewer=None, minimum=None,
           counts: Counter | None = None) -> Round:
    """Compile candidates with dbt and run their SQL, answer, phrase and validate them.

    With a reviewer (`dptool.generate.judge.Reviewer`), the LLM phrases, stage 1 and the judge validate. `counts`
    adds up the gold models compiled, gold and support queries run and rounds.
    """
    counts = counts if counts is not None else Counter()
    counts["rounds"] += 1
    counts["gold_compiled"] += len(candidates)
    out = Round()
    tasks, built, builds = [], {}, []
    mapping = {relation_key(t.relation_name, dialect): (t.domain, t.name) for t in catalog.tables.values()}
    writer = VariantWriter(dialect, mapping, "duckdb")  # the bundle's warehouse is DuckDB
    # two steps per candidate: its gold model compiled, its query run
    # materialize is closed as soon as the loop ends, by an error or Ctrl-C too: its queries still running stop
    # the support queries are compiled in the same `dbt compile` as the gold models (one dbt run per round)
    support_compiled = support_texts(candidates, catalog, minimum)
    with progressbar(length=2 * len(candidates) + len(support_compiled), label="  gold",
                           file=None if progress else _Null()) as bar, \
            closing(materialize(project, candidates, catalog, connection, on_done=bar.update,
                                also=support_compiled)) as outcomes:
        for c, outcome in outcomes:
            counts["gold_run"] += isinstance(outcome, Built) or outcome == NO_EFFECT  # its rows read
            if isinstance(outcome, str):
                if outcome.startswith(MODEL_ERROR):
                    outcome = sql_error(c, outcome.removeprefix(MODEL_ERROR))
                    out.sql_errors.append((c, outcome))
                out.dropped[c.task_id] = outcome
                continue
            try:
                task, rows, query = _task(outcome, catalog, writer)
            except NotScorable as exc:
                out.dropped[c.task_id] = f"not scorable: {exc}"
                continue
            tasks.append(task)
            built[c.task_id] = c
            builds.append(outcome)
            out.gold_rows[task["task_id"]] = rows
            out.gold_queries[task["task_id"]] = query
            out.rows[task["task_id"]] = (outcome.columns, outcome.rows)
    # the rows and entities each answer rests on, and the groups its rules remove (validate's thin_support,
    # removed_group_asked; phrase says when a listing leaves groups out)
    support = supports(project, builds, catalog, connection, compiled=support_compiled, minimum=minimum)
    counts["support_run"] += len(builds)
    for task in list(tasks):
        found = support.get(task["task_id"], "support query: not run")
        if isinstance(found, dict):
            task["support"] = found
            continue
        tasks.remove(task)
        del built[task["task_id"]]
        out.dropped[task["task_id"]] = found
        for kept in (out.gold_rows, out.gold_queries, out.rows):
            kept.pop(task["task_id"], None)
    for task in tasks:
        task["question"] = phrase(built[task["task_id"]], task, catalog)
    out.tasks, out.rejected = reviewer(tasks) if reviewer else validate(tasks, catalog)
    counts["validated"] += len(out.tasks)
    kept_ids = {t["task_id"] for t in out.tasks}
    out.candidates = [built[i] for i in sorted(kept_ids)]
    rejected_ids = built.keys() - kept_ids
    for task_id in rejected_ids:
        out.gold_rows.pop(task_id, None)
        out.gold_queries.pop(task_id, None)
        out.rows.pop(task_id, None)
    phrased = {t["task_id"]: t for t in tasks}
    for c in candidates:
        if c.task_id in out.dropped or c.task_id in rejected_ids:
            reason = out.dropped.get(c.task_id) or _rejection(phrased[c.task_id], catalog, reviewer)
            out.reasons[c.task_id] = reason
            out.drops.append((reason, describe(c)))
    return out


MODEL_ERROR = "model error: "  # how materialize says a candidate's gold model did not compile or its query failed


def sql_error(c, message: str) -> str:
    """A candidate's SQL error, naming its gold model (task), metric and rules: where to look for the cause."""
    rules = ", ".join(c.skeleton.rules) or "none"
    return f"SQL error in gold model {c.task_id} (metric {c.metric}, rules {rules}): {' '.join(message.split())}"


def failing_sources(candidates: list, errors: list[tuple]) -> list[str]:
    """One line per metric every candidate of which failed with a SQL error, and per rule every candidate applying
    which did (of another metric): most likely, its SQL (a metric's `value`, a rule macro) is at fault."""
    failed = {c.task_id for c, _ in errors}
    first = {}
    for c, message in errors:
        first.setdefault(c.metric, (c, message))
        for r in c.skeleton.rules:
            first.setdefault(r, (c, message))
    lines = []
    by_metric: dict[str, list] = {}
    for c in candidates:
        by_metric.setdefault(c.metric, []).append(c)
    broken = {m for m, cs in by_metric.items() if all(c.task_id in failed for c in cs)}
    for m in sorted(broken):
        _, message = first[m]
        common = sorted(set.intersection(*(set(c.skeleton.rules) for c in by_metric[m])))
        suspect = f" (each applies rule {', '.join(common)})" if common else ""
        lines.append(f"warning: metric {m}: all {len(by_metric[m])} of its candidates failed{suspect}; the first: "
                     f"{message}")
    by_rule: dict[str, list] = {}
    for c in candidates:
        if c.metric not in broken:
            for r in c.skeleton.rules:
                by_rule.setdefault(r, []).append(c)
    for r, cs in sorted(by_rule.items()):
        if all(c.task_id in failed for c in cs):
            lines.append(f"warning: rule {r}: all {len(cs)} candidates applying it failed; the first: {first[r][1]}")
    return lines


def _drop_duplicates(done: Round) -> None:
    """No two tasks may ask the same question (dptool.generate.validate.duplicate_questions)."""
    drop = duplicate_questions(done.tasks)
    done.rejected["duplicate_question"] += len(drop)
    for c in done.candidates:
        if c.task_id in drop:
            done.reasons[c.task_id] = "another task asks the same question"
            done.drops.append(("another task asks the same question", describe(c)))
            done.gold_rows.pop(c.task_id, None)
            done.gold_queries.pop(c.task_id, None)
            done.rows.pop(c.task_id, None)
    done.tasks = [t for t in done.tasks if t["task_id"] not in drop]
    done.candidates = [c for c in done.candidates if c.task_id not in drop]


def _augmentation(tasks, pool, used, catalog, profiles, cardinality, seed, dialect, min_per_type, ids: Ids,
                  probes, probe_more, widen: int = 1, min_rows: int | None = None, refused: list | None = None):
    """Candidates from unused skeletons for every (domain, analysis type) below the minimum; the skeletons
    offered are added to `used`. Each later round (`widen` 2, 4) offers that many times as many: a type still
    short after a round is one whose candidates are mostly dropped. Also says whether options remain unoffered.

    A type's options are probed and made in order, a wave at a time (every type's wave in one dbt compile), until
    it has the candidates it keeps: the first options give the same candidates whether or not later ones are
    probed, so a type whose options mostly give candidates (a trend) needs no probe of the rest."""
    have = Counter((t["domain"], t["analysis_type"]) for t in tasks)
    ranked = sorted(pool, key=lambda s: (-quality(s, catalog, cardinality, Counter(), Counter()), s.id))
    wanted = {}
    for domain in catalog.domains:
        for kind in SQL_TYPES:
            missing = min_per_type - have[(domain, kind)]
            if missing > 0:
                options = [s for s in ranked if catalog.metrics[s.metric].domain == domain
                           and kind in s.analysis_types and (s.id, kind) not in used]
                wanted[(domain, kind)] = (missing, options)
    # twelve options per task missing are offered; three candidates per task missing, and three more, are kept:
    # candidates still fail the rule test or have no scorable answer, and where one task is missing its few
    # candidates are often all dropped (a top-k a rule leaves as it is)
    offered = {key: options[: 12 * missing * widen] for key, (missing, options) in wanted.items()}
    keep = {key: (3 * missing + 3) * widen for key, (missing, _) in wanted.items()}
    made: dict[tuple, list] = {key: [] for key in wanted}
    at = dict.fromkeys(wanted, 0)
    while True:
        waves = {key: offered[key][at[key]: at[key] + _wave(keep[key] - len(made[key]), len(made[key]), at[key],
                                                            len(offered[key]) - at[key])]
                 for key in wanted if len(made[key]) < keep[key] and at[key] < len(offered[key])}
        if not waves:
            break
        probe_more([s for wave in waves.values() for s in wave])
        for key, wave in waves.items():
            made[key] += instantiate(wave, catalog, profiles, seed, dialect, types=(key[1],), probes=probes, ids=ids,
                                     support=True, refused=refused, **({"min_rows": min_rows} if min_rows else {}))
            at[key] += len(wave)
    extra = []
    for key in wanted:
        extra += made[key][:keep[key]]
        for c in made[key][keep[key]:]:  # not asked this round: a refresh may still ask it
            ids.forget(c.task_id)
        # a skeleton that gave no candidate (e.g. too few groups qualify for a ranking) gives none next round
        # either, and one not probed yet is offered no more than one that was: the next round tries the options
        # after them
        used.update((s.id, key[1]) for s in offered[key])
    return extra, any(len(options) > len(offered[key]) for key, (_, options) in wanted.items())


def _wave(lacking: int, made: int, probed: int, left: int) -> int:
    """How many of its `left` options a type probes next: twice the candidates it lacks at first, then as many as
    give what it lacks at the rate its options gave candidates so far, and half as many again (all when none
    gave one)."""
    if not probed:
        return min(left, 2 * lacking)
    return min(left, -(-3 * lacking * probed // (2 * made))) if made else left


def _task(b: Built, catalog: Catalog, writer: VariantWriter) -> tuple[dict, list, SharedQuery]:
    c = b.candidate
    metric = catalog.metrics[c.metric]
    columns, rows = b.columns, b.rows
    result = answer(c, metric, columns, rows)
    order_by = {"ranking": ["rank"], "series": ["period"]}.get(c.shape, list(c.group_by))
    try:
        written = writer.queries(b.injected, b.own_sql, ["dptool_gold", "dptool_base"], order_by)
    except DptoolError as exc:
        raise DptoolError(f"gold model {c.task_id} (metric {c.metric!r}): {exc}") from None
    sqls = {"gold": written["dptool_gold"].sql, "base": written["dptool_base"].sql}
    gold_rows = [tuple(r[1:]) for r in rows if r[0] == "gold"]
    if order_by:
        index = [columns.index(col) - 1 for col in order_by]
        # NULLs last, as the SQL orders them: a NULL group (a missing code) is a group too
        gold_rows.sort(key=lambda r: tuple((r[i] is None, r[i]) for i in index))
    rules = c.skeleton.rules  # a counterfactual's withdrawn rule is part of the task too
    rule_types = [catalog.rules[r].type for r in rules]
    task = {
        "task_id": c.task_id,
        "domain": metric.domain,
        "analysis_type": c.analysis_type,
        "tier": "knowledge+analytics+rule" if rules else "knowledge+analytics",
        "question": "",
        "answer_format": result["answer_format"],
        "gold": result["gold"],
        "base": result["base"],
        # a counterfactual's base applies every rule: what an answer ignoring the rules gives is stored apart
        **({"rule_free": result["rule_free"]} if "rule_free" in result else {}),
        "tolerance": result["tolerance"],
        "gold_sql": sqls["gold"],
        "base_sql": sqls["base"],
        "metric_ids": [c.metric, *metric.components],
        "rule_ids": list(rules),
        "rule_types": rule_types,
        # what the question states about the rules (dptool.generate.validate's scope_mismatch proves it)
        "rule_scope": c.rule_scope,
        "rules_in_force": list(c.rules),
        **({"withdrawn_rule": c.withdrawn_rule} if c.withdrawn_rule else {}),
        "dimension": c.dimension_column,
        "slice": c.slice,
        "subgraph_id": c.skeleton.id,
        "dbt_node": b.unique_id,
        # the arguments of the gold model: what `dptool ablate` and a rerun need to rebuild it
        "spec": {"metric": c.metric, "rules": list(c.rules), "base_rules": list(c.base_rules), "where": c.where,
                 "group_by": c.group_by, "shape": c.shape, "k": c.k, "min_rows": c.min_rows, "period": c.period},
    }
    return task, gold_rows, written["dptool_gold"]


def _rejection(task: dict, catalog: Catalog, reviewer) -> str:
    """Why validation rejected a task: the judge's reason, or the stage-1 checks it failed."""
    if reviewer is not None and reviewer.reasons.get(task["task_id"]):
        return reviewer.reasons[task["task_id"]]
    failed = issues(task, catalog, identifiers(catalog))
    return "stage-1 check: " + ", ".join(failed) if failed else "rejected by a stage-1 check"


class _Null:
    def write(self, _):
        pass

    def flush(self):
        pass
