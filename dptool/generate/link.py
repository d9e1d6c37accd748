"""`dptool link`: rule -> metric links proposed by an LLM and verified by executing them (DI-Bench §3.1).

For each rule document the model proposes the metrics the rule modifies, the dimension values it is
conditional on, and the SQL change as edits of the query spec `q` (where, having, columns, value).
dptool renders every proposal as a draft rule macro and a `dptool.metric_variants` model in temporary
folders of the project, builds them with dbt in one run, and checks whether the metric's answer changes
(DI-Bench's counterfactual check). The temporary files and tables are removed and the project's
artifacts restored; what remains are suggestion files for a person to review (`target/dptool_link/`):
one draft macro per rule and a report with the precision and recall of the proposed links against the
declared ones. Nothing is applied to the project.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from dptool.errors import DptoolError
from dptool.generate.materialize import jinja_literal
from dptool.llm.client import LLM, Prompt
from dptool.outdir import LINK, check_replaceable, publish, staging_folder
from dptool.project.catalog import Catalog, Rule
from dptool.project.dbt import DbtProject
from dptool.project.warehouse import Warehouse

STAGE_LINK = "link"
TMP_FOLDER = "dptool_link_tmp"
TAG = "dptool_link"
SCHEMA = "dptool_link"
OUT = Path("target") / "dptool_link"
ARTIFACTS = ("manifest.json", "run_results.json")
MAX_DOCUMENT_CHARS = 12000


@dataclass
class Proposal:
    """One proposed rule -> metric link with its SQL change, and what executing it showed."""

    rule: str
    metric: str  # a metric id when `known`, else the name the model gave
    known: bool
    applies_when: dict[str, str] = field(default_factory=dict)
    where: list[str] = field(default_factory=list)
    having: list[str] = field(default_factory=list)
    columns: dict[str, str] = field(default_factory=dict)
    value: str | None = None
    reason: str = ""
    outcome: str = ""  # changes | no change | build failed | unknown metric | no edit
    detail: str = ""
    values: dict = field(default_factory=dict)  # base and proposed answers, overall (and per group)

    @property
    def has_edit(self) -> bool:
        return bool(self.where or self.having or self.columns or self.value)


# --- proposing --------------------------------------------------------------------------------------------------


def _domain_catalog(rule: Rule, catalog: Catalog) -> Catalog:
    return catalog.subset(rule.domain) if rule.domain else catalog


def link_messages(prompt: Prompt, rule: Rule, catalog: Catalog) -> list[dict]:
    """The link prompt for one rule: its document, the domain's metric catalog and dimensions."""
    domain = _domain_catalog(rule, catalog)
    metrics = "\n".join(f"- {m.id}: {m.label}; value {m.value}; columns {', '.join(m.columns)}"
                        for m in sorted(domain.metrics.values(), key=lambda m: m.id))
    dims = {}
    for d in sorted(domain.dimensions.values(), key=lambda d: d.id):
        dims.setdefault(d.column, f"- {d.column}: {d.kind} ({d.label})")
    document = rule.document if len(rule.document) <= MAX_DOCUMENT_CHARS else rule.document[:MAX_DOCUMENT_CHARS] + " …"
    return [{"role": "system", "content": prompt.render("system")},
            {"role": "user", "content": prompt.render("user", title=rule.title, document=document, metrics=metrics,
                                                      dimensions="\n".join(dims.values()) or "(none)")}]


def _links_problem(value: dict) -> str | None:
    links = value.get("links")
    if not isinstance(links, list):
        return 'the object needs "links": a list'
    for i, link in enumerate(links):
        if not isinstance(link, dict) or not isinstance(link.get("metric"), str) or not link["metric"].strip():
            return f'links[{i}] needs a string "metric"'
        for key in ("where", "having"):
            if not isinstance(link.get(key) or [], list) or not all(isinstance(x, str) for x in link.get(key) or []):
                return f'links[{i}].{key} must be a list of SQL strings'
        for key in ("columns", "applies_when"):
            if not isinstance(link.get(key) or {}, dict):
                return f'links[{i}].{key} must be an object'
        if not all(isinstance(x, str) for x in (link.get("columns") or {}).values()):
            return f'links[{i}].columns must map column names to SQL strings'
        if link.get("value") is not None and not isinstance(link["value"], str):
            return f'links[{i}].value must be a SQL string or null'
    return None


def _metric_id(name: str, catalog: Catalog) -> str | None:
    name = name.strip()
    if name in catalog.metrics:
        return name
    for m in catalog.metrics.values():
        if m.label.lower() == name.lower():
            return m.id
    return None


def propose(llm: LLM, prompt: Prompt, rule: Rule, catalog: Catalog) -> list[Proposal]:
    """The model's proposed links for one rule document, one per metric (the first one wins)."""
    reply = llm.chat_json(link_messages(prompt, rule, catalog), stage=STAGE_LINK, check=_links_problem)
    out: dict[str, Proposal] = {}
    for link in reply["links"]:
        metric = _metric_id(link["metric"], catalog)
        p = Proposal(
            rule=rule.id, metric=metric or link["metric"].strip(), known=metric is not None,
            applies_when={str(k): str(v) for k, v in (link.get("applies_when") or {}).items()},
            where=[w for w in link.get("where") or [] if w.strip()],
            having=[h for h in link.get("having") or [] if h.strip()],
            columns={str(k): v for k, v in (link.get("columns") or {}).items() if v.strip()},
            value=(link.get("value") or "").strip() or None,
            reason=" ".join(str(link.get("reason") or "").split())[:300],
        )
        out.setdefault(p.metric, p)
    return list(out.values())


# --- rendering ---------------------------------------------------------------------------------------------------


def _comment(text: str) -> str:
    return text.replace("#}", "# }").replace("{#", "{ #")


def edit_lines(p: Proposal, indent: str = "  ") -> list[str]:
    """The Jinja statements that apply a proposal's edits to `q`."""
    lines = [f"{indent}{{% do q.where.append({jinja_literal(w)}) %}}" for w in p.where]
    lines += [f"{indent}{{% do q.having.append({jinja_literal(h)}) %}}" for h in p.having]
    if p.columns:
        lines.append(f"{indent}{{% do q.columns.update({jinja_literal(dict(sorted(p.columns.items())))}) %}}")
    if p.value:
        lines.append(f"{indent}{{% do q.update({{'value': {jinja_literal(p.value)}}}) %}}")
    return lines


def draft_macro(name: str, p: Proposal) -> str:
    """A temporary rule macro applying one proposal, for any metric it is called with."""
    return "\n".join([f"{{% macro rule__{name}(metric, q) %}}", *edit_lines(p), "  {{ return(q) }}",
                      "{% endmacro %}", ""])


def variants_model(metric: str, rule_name: str, group_by: str | None) -> str:
    config = f"{{{{ config(materialized='table', schema='{SCHEMA}', tags=['{TAG}']) }}}}"
    args = f"{jinja_literal(metric)}, {jinja_literal([rule_name])}"
    if group_by:
        args += f", group_by={jinja_literal([group_by])}"
    return f"{config}\n{{{{ dptool.metric_variants({args}) }}}}\n"


def suggestion(rule: Rule, proposals: list[Proposal], model: str, prompt: str) -> str:
    """The draft rule macro a person reviews: one branch per proposal that changed its metric's answer."""
    kept = [p for p in proposals if p.outcome == "changes"]
    others = [p for p in proposals if p.outcome != "changes"]
    head = [f"Suggested by `dptool link` ({model}, prompt {prompt}) from the rule document \"{rule.title}\".",
            "Review before use: nothing in the project was changed. Every branch below was built with dbt",
            "and changed its metric's answer:"]
    head += [f"  {p.metric}: {p.detail}" for p in kept] or ["  (none)"]
    if others:
        head.append("Proposed but left out:")
        head += [f"  {p.metric}: {p.outcome}{' (' + p.detail + ')' if p.detail else ''}" for p in others]
    conditions = {k: v for p in kept for k, v in sorted(p.applies_when.items())}
    head += ["Suggested rule properties (meta.dptool.rule):",
             f"  modifies: [{', '.join(p.metric for p in kept)}]"]
    if conditions:
        head.append("  applies_when: {" + ", ".join(f"{k}: {v}" for k, v in conditions.items()) + "}")
    lines = ["{#-", *(_comment("  " + h) for h in head), "-#}", f"{{% macro rule__{rule.id}(metric, q) %}}"]
    for p in kept:
        if p.reason:
            lines.append(f"  {{#- {_comment(p.reason)} -#}}")
        lines.append(f"  {{%- if metric == {jinja_literal(p.metric)} %}}")
        lines += edit_lines(p, "  ")
        lines.append("  {%- endif %}")
    lines += ["  {{ return(q) }}", "{% endmacro %}", ""]
    return "\n".join(lines)


# --- verifying ---------------------------------------------------------------------------------------------------


def _paths(project: DbtProject, key: str, default: str) -> Path:
    conf = yaml.safe_load((project.project_dir / "dbt_project.yml").read_text(encoding="utf-8")) or {}
    paths = conf.get(key) or [default]
    return project.project_dir / paths[0] / TMP_FOLDER


def _group_column(p: Proposal, catalog: Catalog) -> str | None:
    """A dimension to verify per group on: the rule's condition, or any for a per-group (having) rule."""
    metric = catalog.metrics[p.metric]
    for column in sorted(p.applies_when):
        if column in metric.columns:
            return column
    if p.having:
        for dim in catalog.dimensions_of(metric):
            if dim.kind != "temporal":
                return dim.column
    return None


def _rows(rows: list[tuple], variant: str) -> list[tuple]:
    # 10 significant digits, not decimals: a sum in the millions differs in its 9th decimal from one run to the
    # next (DuckDB adds doubles in thread order), and a rule that changes nothing must not look like a change
    picked = [tuple(float(f"{v:.10g}") if isinstance(v, float) else v for v in r[1:]) for r in rows if r[0] == variant]
    return sorted(picked, key=repr)


def _short(value) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def verify(project: DbtProject, catalog: Catalog, proposals: list[Proposal]) -> None:
    """Build every executable proposal with dbt and record whether its metric's answer changes."""
    plan = []
    for p in proposals:
        if not p.known:
            p.outcome, p.detail = "unknown metric", "no metric of the catalog has this id or name"
        elif not p.has_edit:
            p.outcome, p.detail = "no edit", "the proposal gives no SQL change"
        else:
            plan.append(p)
    if not plan:
        return
    models, macros = _paths(project, "model-paths", "models"), _paths(project, "macro-paths", "macros")
    target = project.project_dir / "target"
    saved = {name: (target / name).read_bytes() for name in ARTIFACTS if (target / name).is_file()}
    names = {}
    try:
        for folder in (models, macros):
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
        for i, p in enumerate(plan, start=1):
            name = f"dptool_link_{i:03d}"
            group = _group_column(p, catalog)
            names[id(p)] = (name, group)
            (macros / f"rule__{name}.sql").write_text(draft_macro(name, p), encoding="utf-8")
            (models / f"{name}.sql").write_text(variants_model(p.metric, name, None), encoding="utf-8")
            if group:
                (models / f"{name}__by_group.sql").write_text(variants_model(p.metric, name, group), encoding="utf-8")
        results = project.run("build", "--select", f"tag:{TAG}")
    finally:
        # the temporary files, what dbt compiled and ran from them, and the artifacts as they were
        leftovers = [p for sub in ("compiled", "run") if (target / sub).is_dir()
                     for p in (target / sub).rglob(TMP_FOLDER) if p.is_dir()]
        for folder in (models, macros, *leftovers):
            shutil.rmtree(folder, ignore_errors=True)
        for name, data in saved.items():
            (target / name).write_bytes(data)
    by_name = {r.name: r for r in results if r.resource_type == "model"}
    connection = project.connection()
    with Warehouse.of(connection) as wh:
        for p in plan:
            name, group = names[id(p)]
            checked = [(name, "overall")] + ([(f"{name}__by_group", f"by {group}")] if group else [])
            changed, failed = [], []
            for model, label in checked:
                node = by_name.get(model)
                if node is None or node.status != "success":
                    failed.append(" ".join((node.message if node else "not run").split())[:200])
                    continue
                _, rows = wh.query(f"select * from {node.relation_name}")
                base, mine = _rows(rows, "base"), _rows(rows, name)
                if label == "overall" and base and mine:
                    p.values = {"base": base[0][-1], "proposed": mine[0][-1]}
                if base != mine:
                    changed.append(label)
            if failed and not changed:
                p.outcome, p.detail = "build failed", failed[0]
            elif changed:
                p.outcome = "changes"
                p.detail = "the answer changes " + " and ".join(changed)
                if p.values and "overall" in changed:
                    p.detail += f" ({_short(p.values['base'])} -> {_short(p.values['proposed'])})"
            else:
                p.outcome, p.detail = "no change", "built, and the answer is the same as without the rule"
    _drop_schema(connection)


def _drop_schema(connection) -> None:
    """The verification tables leave the warehouse (DuckDB; other targets keep the schema)."""
    if connection.adapter_type != "duckdb" or not connection.path:
        return
    import duckdb

    con = duckdb.connect(connection.path)
    try:
        con.execute(f"drop schema if exists {SCHEMA} cascade")
    finally:
        con.close()


# --- scoring against the declared links --------------------------------------------------------------------------


def _pr(proposed: set, declared: set) -> dict:
    hit = len(proposed & declared)
    return {"proposed": len(proposed), "declared": len(declared), "correct": hit,
            "precision": round(hit / len(proposed), 4) if proposed else None,
            "recall": round(hit / len(declared), 4) if declared else None}


def scores(rules: list[Rule], proposals: list[Proposal]) -> dict:
    """Precision and recall of the proposed links (and of those verified by execution) against the declared."""
    declared = {(r.id, m) for r in rules for m in r.modifies}
    proposed = {(p.rule, p.metric) for p in proposals}
    verified = {(p.rule, p.metric) for p in proposals if p.outcome == "changes"}
    declared_cond = {(r.id, k, v) for r in rules for k, v in r.applies_when.items()}
    proposed_cond = {(p.rule, k, v) for p in proposals for k, v in p.applies_when.items()}
    out = {"links": _pr(proposed, declared), "verified_links": _pr(verified, declared),
           "conditions": _pr(proposed_cond, declared_cond), "by_domain": {}}
    domain_of = {r.id: r.domain for r in rules}
    for domain in sorted({r.domain for r in rules}):
        def mine(pairs, d=domain):
            return {x for x in pairs if domain_of[x[0]] == d}

        out["by_domain"][domain] = {"links": _pr(mine(proposed), mine(declared)),
                                    "verified_links": _pr(mine(verified), mine(declared))}
    return out


def markdown(report: dict) -> str:
    def pct(x):
        return "—" if x is None else f"{x * 100:.1f}%"

    s = report["scores"]
    rows = [f"# Rule-link proposals: {report['model']} ({report['prompt']})", "",
            f"{len(report['rules'])} rule documents, {len(report['proposals'])} proposed links. Suggestions only: "
            "review the draft macros next to this file; nothing in the project was changed.", "",
            "| against the declared links | proposed | declared | correct | precision | recall |",
            "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for key, label in (("links", "rule → metric, as proposed"), ("verified_links", "rule → metric, answer changed"),
                       ("conditions", "rule → dimension value")):
        r = s[key]
        rows.append(f"| {label} | {r['proposed']} | {r['declared']} | {r['correct']} | {pct(r['precision'])} | "
                    f"{pct(r['recall'])} |")
    rows += ["", "| rule | metric | declared | executed |", "| --- | --- | --- | --- |"]
    for p in report["proposals"]:
        rows.append(f"| {p['rule']} | {p['metric']} | {'yes' if p['declared'] else 'no'} | {p['outcome']}"
                    f"{': ' + p['detail'] if p['detail'] else ''} |")
    missed = [f"{r} → {m}" for r, m in report["missed"]]
    if missed:
        rows += ["", "Declared links no proposal found: " + ", ".join(missed)]
    return "\n".join(rows) + "\n"


def run_link(project: DbtProject, catalog: Catalog, llm: LLM, prompt: Prompt, *, rule_ids: list[str] | None = None,
             domain: str | None = None, out: Path | None = None, echo=print) -> dict:
    """Propose, verify and write the suggestions of every selected rule; returns the report."""
    out = check_replaceable(out or project.project_dir / OUT, LINK)  # before any request
    rules = sorted(catalog.rules.values(), key=lambda r: r.id)
    if rule_ids:
        unknown = sorted(set(rule_ids) - set(catalog.rules))
        if unknown:
            raise DptoolError(f"--rule {unknown[0]!r}: no rule macro rule__{unknown[0]} declares meta.dptool.rule")
        rules = [r for r in rules if r.id in rule_ids]
    if domain:
        rules = [r for r in rules if r.domain == domain]
    if not rules:
        raise DptoolError("no rule document to link" + (f" in domain {domain!r}" if domain else ""))
    proposals: list[Proposal] = []
    for i, rule in enumerate(rules, start=1):
        found = propose(llm, prompt, rule, catalog)
        echo(f"  [{i}/{len(rules)}] {rule.id}: {len(found)} proposed link(s)")
        proposals += found
    echo(f"[verify] dbt build of {sum(p.known and p.has_edit for p in proposals)} draft rule(s)")
    verify(project, catalog, proposals)
    declared = {(r.id, m) for r in rules for m in r.modifies}
    report = {
        "model": llm.name, "prompt": prompt.label, "rules": [r.id for r in rules],
        "scores": scores(rules, proposals),
        "proposals": [{**asdict(p), "declared": (p.rule, p.metric) in declared} for p in proposals],
        "missed": sorted(declared - {(p.rule, p.metric) for p in proposals}),
    }
    write_suggestions(out, rules, proposals, report)
    return report


def write_suggestions(out: Path, rules: list[Rule], proposals: list[Proposal], report: dict) -> None:
    """<rule>.sql per rule with a proposal, report.json and report.md; replaced only once all are written."""
    out = check_replaceable(out, LINK)
    tmp = staging_folder(out)
    try:
        for rule in rules:
            mine = [p for p in proposals if p.rule == rule.id]
            if mine:
                (tmp / f"{rule.id}.sql").write_text(suggestion(rule, mine, report["model"], report["prompt"]),
                                                    encoding="utf-8")
        (tmp / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False, sort_keys=True) + "\n",
                                         encoding="utf-8")
        (tmp / "report.md").write_text(markdown(report), encoding="utf-8")
        publish(tmp, out, LINK)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
