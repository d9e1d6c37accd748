"""`dptool init` and `dptool rule new`: set a dbt project up for dptool, and scaffold a rule.

Both only add: a line to packages.yml (or dependencies.yml), lines to .gitignore, a selector to selectors.yml,
and new files. An existing file of the user's is never rewritten; what init cannot add safely it says in one
line (a note). A dry run says what would change and writes nothing. Running init twice changes nothing the
second time.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

import dptool
from dptool.errors import DptoolError
from dptool.project.dbt import GOLD_VAR

# what dptool writes into a project by default, relative to it: bundles (a bundle's warehouse.duckdb is a copy of
# the data), answers, scores, runs and comparisons (they quote the data), and the generated models. Data products
# (`dp create`, `dp export`) are the user's to keep, so they are not here.
OUTPUTS = ("bundle/", "answers.jsonl", "score/", "runs/", "compare/", "dp_bench/")
GENERATED = ("models/dptool_gold/", "models/dptool_semantic/", "models/dptool_batch/", "models/dptool_ablation/")
IGNORED = OUTPUTS + GENERATED
IGNORE_HEADER = "# written by dptool (a bundle holds a copy of the data): `dptool init` added these\n"
GOLD = "dptool_gold"  # the gold models' tag, group, custom schema and selector
# the line that keeps gold models in their schema whatever else a project's generate_schema_name does
SCHEMA_LINE = "{%- if custom_schema_name == 'dptool_gold' %}{{ return('dptool_gold') }}{% endif -%}"
# the first line of a rule document `rule new` writes: one still holding it was never written (generate warns)
SCAFFOLD_TODO = "TODO: write the rule as the business states it"
RULE_TYPES = ("definitional", "exclusionary", "temporal", "conditional", "privacy", "override")
_ID = re.compile(r"[a-z][a-z0-9_]*")


def package_dir() -> Path:
    """The dptool dbt package shipped inside the installed Python package."""
    return (Path(dptool.__file__).resolve().parent / "dbt_package").resolve()


@dataclass
class Change:
    path: str  # relative to the project
    action: str  # create | append | update | ok | skip
    detail: str
    text: str = ""  # the whole new file (create), the lines added (append), the new file (update)

    def line(self, dry_run: bool, width: int = 34) -> str:
        verb = {"create": "create", "append": "add", "update": "update"}.get(self.action)
        what = (f"would {verb}" if dry_run else {"create": "created", "add": "added", "update": "updated"}[verb]) \
            if verb else self.action
        return f"  {self.path:<{width}} {what:<13} {self.detail}"


def _project(project_dir: str | Path) -> tuple[Path, dict]:
    root = Path(project_dir).resolve()
    path = root / "dbt_project.yml"
    if not path.is_file():
        raise DptoolError(f"{root}: no dbt_project.yml here; run `dptool init` at the root of a dbt project "
                          "(or pass --project-dir)")
    try:
        conf = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise DptoolError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from None
    if not isinstance(conf, dict) or not conf.get("name"):
        raise DptoolError(f"{path}: no project `name`; is this a dbt project file?")
    return root, conf


def _paths(conf: dict, key: str, default: list[str]) -> list[str]:
    value = conf.get(key)
    return [str(v) for v in value] if isinstance(value, list) and value else default


def _docs_dir(conf: dict, fallback: str) -> str:
    """A folder dbt reads docs blocks from: any resource path, unless docs-paths narrows them."""
    docs = conf.get("docs-paths")
    return str(docs[0]) if isinstance(docs, list) and docs else fallback


def plan_init(project_dir: str | Path) -> tuple[Path, dict, list[Change]]:
    """What `dptool init` would change in the project, in order."""
    root, conf = _project(project_dir)
    models = _paths(conf, "model-paths", ["models"])
    macros = _paths(conf, "macro-paths", ["macros"])
    if "models" not in models:
        raise DptoolError(f"{root / 'dbt_project.yml'}: model-paths is {models}; dptool writes its models under "
                          "models/dptool_gold/ and models/dptool_semantic/, so add \"models\" to model-paths")
    changes = [_package_change(root)]
    schema = _schema_change(root, macros)
    if _enforces_contracts(conf.get("models")):
        changes.append(Change("models/dptool_gold/", "note", "your models enforce contracts, which gold and semantic-"
                              f"layer models cannot: under models: {conf['name']}: add dptool_gold: {{+contract: "
                              "{enforced: false}} and dptool_semantic: {+contract: {enforced: false}}"))
    else:
        where = "" if schema else ": with dbt's own generate_schema_name, <target schema>_dptool_gold"
        changes.append(Change("models/dptool_gold/", "ok", "nothing to configure: gold models set their own config "
                              f"(table, tag and group dptool_gold, custom schema dptool_gold{where})"))
    if schema:
        changes.append(schema)
    changes.append(_selectors_change(root))
    changes.append(_gitignore_change(root))
    docs = _docs_dir(conf, models[0])
    for rel, text, what in _examples(macros[0], docs):
        if (root / rel).exists():
            changes.append(Change(rel, "skip", "exists; left as it is"))
        else:
            changes.append(Change(rel, "create", what, text))
    return root, conf, changes


def _enforces_contracts(config) -> bool:
    """Whether dbt_project.yml enforces model contracts at some level (dptool's models have none)."""
    if not isinstance(config, dict):
        return False
    for key, value in config.items():
        if key.lstrip("+") == "contract" and isinstance(value, dict) and value.get("enforced") is True:
            return True
        if isinstance(value, dict) and _enforces_contracts(value):
            return True
    return False


def apply(root: Path, changes: list[Change]) -> None:
    for c in changes:
        path = root / c.path
        if c.action == "create":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(c.text, encoding="utf-8")
        elif c.action == "append":
            old = path.read_text(encoding="utf-8") if path.exists() else ""
            sep = "" if not old or old.endswith("\n") else "\n"
            path.write_text(old + sep + c.text, encoding="utf-8")
        elif c.action == "update":
            path.write_text(c.text, encoding="utf-8")


def init(project_dir: str | Path, dry_run: bool = False) -> tuple[Path, dict, list[Change]]:
    root, conf, changes = plan_init(project_dir)
    if not dry_run:
        apply(root, changes)
    return root, conf, changes


# --- packages.yml ---------------------------------------------------------------------------------------------

def _package_change(root: Path) -> Change:
    ours = package_dir()
    version = _version_of(ours)
    if version != dptool.__version__:
        raise DptoolError(f"{ours}: the dptool dbt package is version {version} and the CLI {dptool.__version__}; "
                          "reinstall dptool")
    target = "packages.yml"
    if not (root / "packages.yml").exists() and _has_packages(root / "dependencies.yml"):
        target = "dependencies.yml"
    path = root / target
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        data = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as exc:
        raise DptoolError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from None
    entries = (data or {}).get("packages") or []
    if not isinstance(entries, list):
        raise DptoolError(f"{path}: `packages` is not a list")
    # relative to the project: packages.yml and the package-lock.yml `dbt deps` writes are tracked files, and an
    # absolute path would be this machine's (a venv inside the project gives every clone the same path)
    relative = package_path(root)
    value = json.dumps(relative)
    for entry in entries:
        local = entry.get("local") if isinstance(entry, dict) else None
        if not local:
            continue
        where = (root / local).resolve() if not Path(local).is_absolute() else Path(local).resolve()
        if _name_of(where) != "dptool":
            continue
        if where == ours and not Path(local).is_absolute():
            return Change(target, "ok", f"has the dptool dbt package {version} ({local})")
        old = _version_of(where) or "?"
        pattern = re.compile(r"(local:\s*)(['\"]?)" + re.escape(str(local)) + r"\2")
        if not pattern.search(text):
            raise DptoolError(f"{path}: points the dptool package at {local}; change it to {relative}")
        new = pattern.sub(lambda m: m.group(1) + value, text, count=1)
        why = " (a path relative to the project, not this machine's)" if where == ours else ""
        return Change(target, "update", f"the dptool package: {local} ({old}) -> {relative} ({version}){why}", new)
    line = f"- local: {value}  # the dptool dbt package {version}, inside the installed dptool\n"
    if not text.strip():
        return Change(target, "create", f"- local: {relative}", "packages:\n  " + line)
    block = re.search(r"^packages:[ \t]*(#.*)?$", text, re.M)
    items = re.findall(r"^([ \t]*)- ", text[block.end():], re.M) if block else []
    last_key = max((m.start() for m in re.finditer(r"^[A-Za-z_]", text, re.M)), default=-1)
    if block is None or not items or last_key != block.start():
        raise DptoolError(f"{path}: cannot add a line safely; add `- local: {relative}` to its packages yourself")
    return Change(target, "append", f"- local: {relative}", items[0] + line)


def package_path(root: Path) -> str:
    """The dptool dbt package as a path relative to the project `root` (what init writes into packages.yml)."""
    return Path(os.path.relpath(package_dir(), root.resolve())).as_posix()


def _has_packages(path: Path) -> bool:
    try:
        return path.is_file() and bool((yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("packages"))
    except yaml.YAMLError:
        return False


def _name_of(folder: Path) -> str:
    try:
        return str((yaml.safe_load((folder / "dbt_project.yml").read_text(encoding="utf-8")) or {}).get("name", ""))
    except (OSError, yaml.YAMLError):
        return ""


def _version_of(folder: Path) -> str:
    try:
        return str((yaml.safe_load((folder / "dbt_project.yml").read_text(encoding="utf-8")) or {}).get("version", ""))
    except (OSError, yaml.YAMLError):
        return ""


# --- where gold models land: the project's generate_schema_name ----------------------------------------------

_SCHEMA_MACRO = re.compile(r"\{%-?\s*macro\s+generate_schema_name\s*\(")


def _schema_change(root: Path, macro_paths: list[str]) -> Change | None:
    """Gold models ask for the custom schema dptool_gold; the project's generate_schema_name, if it has one,
    decides the schema (None: it has none, and dbt's own makes it <target schema>_dptool_gold)."""
    for folder in macro_paths:
        for path in sorted((root / folder).rglob("*.sql")) if (root / folder).is_dir() else []:
            text = path.read_text(encoding="utf-8", errors="replace")
            if not _SCHEMA_MACRO.search(text):
                continue
            rel = path.relative_to(root).as_posix()
            if GOLD in text:
                return Change(rel, "ok", "its generate_schema_name places the gold models (custom schema dptool_gold)")
            return Change(rel, "note", "its generate_schema_name decides where gold models land (they ask for the "
                                       "custom schema dptool_gold); to keep them in schema dptool_gold, make this "
                                       f"the macro's first line: {SCHEMA_LINE}")
    return None


# --- selectors.yml: the gold models, when asked for -----------------------------------------------------------

# Everyday builds need no selector: the gold models are disabled unless the dbt var dptool_gold is true
# (dptool.project.dbt.GOLD_VAR), whatever a command selects. This one selects them once enabled.
GOLD_BUILD = f"dbt build --selector {GOLD} --vars '{{{GOLD_VAR}: true}}'"
SELECTORS_HEADER = f"""\
# dbt selectors. dptool's gold models are disabled unless the var {GOLD_VAR} is true, so no other dbt command
# builds them; `{GOLD_BUILD}` builds them and their rule tests.
selectors:
"""
GOLD_SELECTOR_YML = f"""\
- name: {GOLD}
  description: "dptool's gold models, their rule tests and their overview: `{GOLD_BUILD}`."
  definition:
    method: tag
    value: {GOLD}
"""


def _selectors_change(root: Path) -> Change:
    """Add a selector of the gold models to what selectors.yml holds."""
    path = root / "selectors.yml"
    if not path.exists():
        return Change("selectors.yml", "create", f"selector {GOLD}: `{GOLD_BUILD}` builds the gold models (no "
                      "other dbt command does: they are disabled unless that var is true)",
                      SELECTORS_HEADER + _indent(GOLD_SELECTOR_YML, "  "))
    text = path.read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as exc:
        raise DptoolError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from None
    selectors = (data or {}).get("selectors") or []
    if not isinstance(selectors, list) or not all(isinstance(s, dict) for s in selectors):
        raise DptoolError(f"{path}: `selectors` is not a list of selectors")
    if GOLD in {s.get("name") for s in selectors}:
        return Change("selectors.yml", "ok", f"has selector {GOLD}: `{GOLD_BUILD}` builds the gold models")
    block = re.search(r"^selectors:[ \t]*(#.*)?$", text, re.M)
    items = re.findall(r"^([ \t]*)- ", text[block.end():], re.M) if block else []
    last_key = max((m.start() for m in re.finditer(r"^[A-Za-z_]", text, re.M)), default=-1)
    if block is None or not items or last_key != block.start():
        return Change("selectors.yml", "note", f"cannot add to it safely; add the selector {GOLD} yourself (the "
                                               "README's \"Everyday builds\" shows it)")
    return Change("selectors.yml", "append", f"selector {GOLD}: `{GOLD_BUILD}` builds the gold models",
                  _indent(GOLD_SELECTOR_YML, items[0]))


def _indent(text: str, prefix: str) -> str:
    return "".join(prefix + line if line.strip() else line for line in text.splitlines(keepends=True))


def git_root(root: Path) -> Path | None:
    """The git work tree holding `root` (the nearest folder up with a .git), None outside one."""
    for folder in (root, *root.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _patterns(path: Path) -> set[str]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return set()
    return {line.strip().lstrip("/").rstrip("/") for line in lines if line.strip() and not line.startswith("#")}


def _gitignore_change(root: Path) -> Change:
    """Ignore what dptool writes, in the .gitignore of the git root (the project's own folder outside git), with
    paths relative to it: one `git add .` must not commit a copy of the data."""
    repo = git_root(root)
    top = repo or root
    prefix = root.relative_to(top).as_posix() if top != root else ""
    path = top / ".gitignore"
    rel = Path(os.path.relpath(path, root)).as_posix()
    # a pattern of the project's own .gitignore ignores it too (an earlier init wrote them there)
    have = _patterns(path) | {f"{prefix}/{p}" if prefix else p for p in _patterns(root / ".gitignore")}
    wanted = [(g, f"{prefix}/{g}" if prefix else g) for g in IGNORED]
    missing = [(g, p) for g, p in wanted if p.rstrip("/") not in have]
    where = f" (the git root{'' if top == root else ' ' + str(top)})" if repo else " (no git repo yet)"
    if not missing:
        return Change(rel, "ok", "ignores what dptool writes: " + ", ".join(IGNORED))
    # anchored: `/bundle/` is the project's bundle, not any folder of that name
    lines = "".join(f"/{p}\n" for _, p in missing)
    action = "append" if path.exists() else "create"
    return Change(rel, action, ", ".join(g for g, _ in missing) + where, IGNORE_HEADER + lines)


# --- the examples ---------------------------------------------------------------------------------------------

EXAMPLES_YML = """\
# Examples of dptool declarations (written by `dptool init`; every line is a comment, so dbt ignores this file).
# Copy what you need into your own properties files. dptool reads them from target/manifest.json.
#
# Metrics declared in the dbt semantic layer (semantic_models with measures; simple, ratio and derived
# metrics) need nothing more: `dptool generate` turns them into dptool metrics, their categorical
# dimensions and agg_time_dimension into dimensions, their entities into joins.
#
# version: 2
#
# models:
#   # A table an agent may query, with two dimensions (temporal | spatial | categorical).
#   - name: orders
#     config:
#       meta:
#         dptool: {table: true}
#     columns:
#       - name: ordered_at
#         config: {meta: {dptool: {dimension: temporal}}}
#       - name: country
#         config: {meta: {dptool: {dimension: spatial, label: delivery country}}}
#       - name: order_id
#         data_tests:
#           - relationships:          # a join between two tables
#               arguments: {to: ref('customers'), field: customer_id}
#
#   # A metric: an ephemeral model at the metric's row grain (here: one row per delivered order) whose
#   # `value` is the aggregate SQL over its documented columns.
#   - name: avg_delivery_days
#     config:
#       materialized: ephemeral
#       meta:
#         dptool:
#           metric:
#             label: Average Delivery Time
#             value: avg(delivery_days)
#             unit: days
#             format: number            # number | percent | currency
#             formula: AVG(days from purchase to delivery) over delivered orders
#             grain: delivered orders     # what one row is: counts and averages run over these
#             period: orders.ordered_at   # the date that places a row in a month, quarter or year (a temporal
#                                         # dimension the model exposes; `table.column` when two tables have one)
#             duration: whole calendar days from purchase to delivery, the times of day ignored
#     columns:
#       - {name: order_id}
#       - {name: ordered_at}
#       - {name: country}
#       - {name: delivery_days}
#
# A semantic-layer metric can override what dptool derives for it:
#
# metrics:
#   - name: revenue
#     config:
#       meta:
#         dptool:
#           metric: {unit: USD, format: currency, grain: paid invoices}
"""

EXAMPLE_RULE_SQL = """\
{#- An example of a business rule, written by `dptool init`. It is inert: a macro becomes a rule once its
    properties declare meta.dptool.rule (see dptool_example_rule.yml). `dptool rule new ID --metric M`
    writes a new rule's macro, properties and document for you. -#}
{% macro rule__dptool_example(metric, q) %}
  {#- a rule changes the query spec `q` of a metric and returns it: q.where, q.having, q.group_by,
      q.columns (row-level columns redefined by name) and q.value (the aggregate) -#}
  {% do q.where.append("delivery_days <= 60") %}
  {{ return(q) }}
{% endmacro %}
"""

EXAMPLE_RULE_YML = """\
# The properties that would make the example macro a rule (written by `dptool init`; every line is a comment).
#
# version: 2
#
# macros:
#   - name: rule__dptool_example
#     description: '{{ doc("rule__dptool_example") }}'    # the rule document: a docs block
#     meta:
#       dptool:
#         rule:
#           title: Delivery Time Outlier Exclusion
#           type: exclusionary    # definitional | exclusionary | temporal | conditional | privacy | override
#           effective_from: "2017-01-01"
#           modifies: [avg_delivery_days]
#           # applies_when: {country: BR}    # a conditional rule: the dimension value it applies to
"""

EXAMPLE_RULE_MD = """\
{#- The document of the example rule, written by `dptool init`: what an agent must find and apply, at least
    20 words. Rule documents may also be plain markdown files in a folder: `dptool generate --rules-dir DIR`
    reads DIR/<rule id>.md for a rule macro without a description. -#}
{% docs rule__dptool_example %}
# Delivery time outliers

Deliveries that took more than 60 days from purchase are data anomalies (lost parcels found later,
manual status fixes). They leave every average of delivery time; the orders still count as delivered.
{% enddocs %}
"""


def _examples(macro_dir: str, docs_dir: str) -> list[tuple[str, str, str]]:
    return [
        ("models/dptool_examples.yml", EXAMPLES_YML, "commented examples: a table, dimensions, a join, a metric"),
        (f"{macro_dir}/dptool_example_rule.sql", EXAMPLE_RULE_SQL, "an example rule macro (inert until declared)"),
        (f"{macro_dir}/dptool_example_rule.yml", EXAMPLE_RULE_YML, "its properties, commented (meta.dptool.rule)"),
        (f"{docs_dir}/dptool_example_rule.md", EXAMPLE_RULE_MD, "its rule document (a docs block)"),
    ]


# --- dptool rule new ------------------------------------------------------------------------------------------

def project_metrics(root: Path) -> tuple[set[str], dict[str, str], dict[str, str]] | None:
    """From the project's last manifest, if any: its metric ids (declared and from the semantic layer), the
    semantic metrics declared under another id (name -> id) and those dptool skips (name -> why)."""
    from dptool.project import semantic
    from dptool.project.declarations import check_manifest

    path = root / "target" / "manifest.json"
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        check_manifest(manifest, str(path))
    except (OSError, json.JSONDecodeError, DptoolError):
        return None  # an unreadable manifest: the metrics are taken as given, as without one
    declared = {n["name"] for n in manifest.get("nodes", {}).values()
                if n.get("resource_type") == "model" and "metric" in ((n.get("config") or {}).get("meta") or
                                                                       n.get("meta") or {}).get("dptool", {})}
    layer = semantic.read_layer(manifest, "")
    renamed = {m.metric: m.name for m in layer.metrics.values() if m.metric != m.name}
    return declared | set(layer.metrics), renamed, dict(layer.skipped)


def resolve_metrics(root: Path, metrics: list[str]) -> tuple[list[str], list[str]]:
    """The metric ids a new rule modifies, checked against the last manifest, and notes for the user (a semantic
    metric declared under another id becomes that id; no manifest: taken as given)."""
    found = project_metrics(root)
    if found is None:
        return list(metrics), [f"(metric {m!r} not checked: no target/manifest.json yet)" for m in metrics]
    known, renamed, skipped = found
    ids, notes = [], []
    for m in metrics:
        if m in known:
            ids.append(m)
        elif m in renamed:
            ids.append(renamed[m])
            notes.append(f"--metric {m}: {m!r} is the semantic metric {m!r}, declared as {renamed[m]!r} (a model is "
                         f"named {m!r}); the rule modifies {renamed[m]}")
        elif m in skipped:
            raise DptoolError(f"--metric {m!r} is a semantic metric dptool skips ({skipped[m]}); a rule can modify "
                              f"only a metric of the catalog: {', '.join(sorted(known))}")
        else:
            raise DptoolError(f"--metric {m!r} is not a metric of this project; its metrics: "
                              f"{', '.join(sorted(known))}")
    return list(dict.fromkeys(ids)), notes


def plan_rule(project_dir: str | Path, rule_id: str, metrics: list[str] | str, rule_type: str = "definitional",
              title: str | None = None, rules_dir: str | None = None) -> tuple[Path, list[Change]]:
    """The files of a new rule of one or more metrics: its macro, its properties, and its document (a docs
    block, or a markdown file in `rules_dir`). Refuses to touch a file that exists."""
    root, conf = _project(project_dir)
    rule_id = rule_id.removeprefix("rule__")
    if not _ID.fullmatch(rule_id):
        raise DptoolError(f"{rule_id!r}: a rule id is lower-case letters, digits and underscores, from a letter")
    if rule_type not in RULE_TYPES:
        raise DptoolError(f"--type {rule_type!r}: expected one of {', '.join(RULE_TYPES)}")
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    if not metrics:
        raise DptoolError("--metric: name at least one metric the rule modifies")
    for metric in metrics:
        if not _ID.fullmatch(metric):
            raise DptoolError(f"--metric {metric!r}: not a metric id")
    macro_dir = _paths(conf, "macro-paths", ["macros"])[0] + "/dptool_rules"
    title = title or rule_id.replace("_", " ").capitalize()
    name = f"rule__{rule_id}"
    which = f"\n      It modifies {', '.join(metrics)}: `metric` is the one being computed." if len(metrics) > 1 else ""
    sql = f"""\
{{% macro {name}(metric, q) %}}
  {{#- {title}: change the query spec `q` of the metric and return it.{which} A rule that changes nothing
      is dropped by dbt's test dptool.rule_changes_answer. For example:
        {{% do q.where.append("amount > 0") %}}                          leave rows out
        {{% do q.columns.update({{'amount': "amount * 0.9"}}) %}}           redefine a row-level column
        {{% do q.update({{'value': "sum(amount) / 12"}}) %}}               redefine the aggregate
  -#}}
  {{{{ return(q) }}}}
{{% endmacro %}}
"""
    described = rules_dir is None
    props = ["version: 2", "", "macros:", f"  - name: {name}"]
    if described:
        props.append(f"    description: '{{{{ doc(\"{name}\") }}}}'")
    props += ["    meta:", "      dptool:", "        rule:", f"          title: {json.dumps(title)}",
              f"          type: {rule_type}", "          # effective_from: \"2024-01-01\"",
              f"          modifies: [{', '.join(metrics)}]",
              "          # applies_when: {dimension_column: value}    # a conditional rule's dimension value", ""]
    # a knowledge task asks for the facts of the `## Rule` section and for the date on the "Effective date" line
    # (dptool.generate.knowledge): the scaffold has both, and no fact until they are written
    body = (f"# {title}\n\n{SCAFFOLD_TODO}: what it changes in {' and '.join(metrics)}, for which rows, from when, "
            "and why. An agent must find this document and apply it to answer correctly.\n\n"
            "Effective date: TODO (the day `effective_from` names, its month written out)\n\n"
            "## Rule\n\nTODO: the rule itself, with its numbers (thresholds, rates, periods): a knowledge task asks "
            "for the numbers, dates and terms in bold of this section.\n")
    changes = [Change(f"{macro_dir}/{name}.sql", "create", "the rule macro: make it change q", sql),
               Change(f"{macro_dir}/{name}.yml", "create", "its properties (meta.dptool.rule)", "\n".join(props))]
    if described:
        docs_dir = _docs_dir(conf, macro_dir.rsplit("/", 1)[0])
        folder = f"{docs_dir}/dptool_rules" if docs_dir != macro_dir.rsplit("/", 1)[0] else macro_dir
        changes.append(Change(f"{folder}/{name}.md", "create", "its rule document (a docs block)",
                              f"{{% docs {name} %}}\n{body}{{% enddocs %}}\n"))
    else:
        folder = Path(rules_dir)
        rel = folder if folder.is_absolute() else Path(rules_dir)
        changes.append(Change(str(rel / f"{rule_id}.md"), "create", "its rule document (--rules-dir)", body))
    for c in changes:
        if (root / c.path).exists():
            raise DptoolError(f"{root / c.path}: exists; dptool rule new never overwrites a file (choose another id)")
    _refuse_existing_rule(root, conf, name, described)
    return root, changes


def _refuse_existing_rule(root: Path, conf: dict, name: str, described: bool) -> None:
    """Refuse a rule whose macro (or docs block) the project defines already, in any file: dbt would refuse the
    second one at the next parse. The project's files are searched too, for a rule added since that parse."""
    path = root / "target" / "manifest.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, json.JSONDecodeError):
        manifest = {}
    kinds = [("macros", "macro")] + ([("docs", "docs block")] if described else [])
    for key, what in kinds:
        for node in (manifest.get(key) or {}).values() if isinstance(manifest, dict) else ():
            if isinstance(node, dict) and node.get("name") == name and node.get("package_name") == conf["name"]:
                where = root / (node.get("original_file_path") or "")
                raise DptoolError(f"{where}: already defines {what} {name}; dptool rule new never adds a rule twice "
                                  "(choose another id)")
    patterns = [("macro", re.compile(r"\{%-?\s*macro\s+" + name + r"\s*\("), ("*.sql",),
                 _paths(conf, "macro-paths", ["macros"]))]
    if described:
        folders = {*_paths(conf, "model-paths", ["models"]), *_paths(conf, "macro-paths", ["macros"]),
                   *_paths(conf, "docs-paths", [])}
        patterns.append(("docs block", re.compile(r"\{%-?\s*docs\s+" + name + r"\s*-?%\}"), ("*.md",),
                         sorted(folders)))
    for what, pattern, globs, folders in patterns:
        for folder in folders:
            for glob in globs:
                for file in sorted((root / folder).rglob(glob)):
                    try:
                        text = file.read_text(encoding="utf-8")
                    except (OSError, UnicodeDecodeError):
                        continue
                    if pattern.search(text):
                        raise DptoolError(f"{file}: already defines {what} {name}; dptool rule new never adds a "
                                          "rule twice (choose another id)")
