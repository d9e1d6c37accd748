"""Projects that once broke dptool, on copies of the corner_shop fixture project (tests/fixtures/corner_shop).

- Dimension columns that need quoting: `Store Name` (a space), `select` (a reserved word) and `Payment` (declared
  `quote: true`). Their candidates compile and run, and the gold models build.
- A rule macro that reads `graph.nodes[...]`: fine when dbt executes it, impossible while dbt parses (the graph is
  empty then). Generate makes its tasks, and the project's own `dbt parse` still works afterwards.
- A rule macro that returns a string instead of the query spec: generate stops with one line naming it, before any
  model is written.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import yaml

from dptool.sql import RESERVED
from tests.conftest import run_cli

FIXTURE = Path(__file__).parent / "fixtures" / "corner_shop"
IGNORED = shutil.ignore_patterns("target", "dbt_packages", "logs", "*.duckdb", "*.duckdb.wal", "dptool_gold",
                                 "packages.yml", "package-lock.yml", "bundle", "__pycache__")
DBT = "import sys; from dbt.cli.main import cli; sys.argv[0] = 'dbt'; sys.exit(cli())"

ORDERS_SQL = """\
select order_id, ordered_at, store as "Store Name", price_band, status, amount,
    case when order_id % 3 = 0 then 'web' else 'till' end as "select",
    case when order_id % 2 = 0 then 'card' else 'cash' end as "Payment"
from {{ ref('raw_orders') }}
"""
METRIC_SQL = """\
select order_id, ordered_at, "Store Name", price_band, status, amount, "select", "Payment"
from {{ ref('orders') }}
"""
GRAPH_RULE = """\
{% macro rule__large_orders_only(metric, q) %}
  {#- the threshold is the number of columns the orders model documents: read from dbt's graph -#}
  {%- set orders = graph.nodes['model.corner_shop.orders'] -%}
  {% do q.where.append("amount >= " ~ (orders.columns | length)) %}
  {{ return(q) }}
{% endmacro %}
"""
STRING_RULE = """\
{% macro rule__exclude_refunds(metric, q) %}
  {{ return("status <> 'refunded'") }}
{% endmacro %}
"""
LARGE_ORDERS = {
    "name": "rule__large_orders_only",
    "description": "Large Order Rule. Only orders that paid at least a few euros count as sales in every sales "
                   "figure: smaller amounts are till corrections, not purchases made by customers of the shop.",
    "meta": {"dptool": {"rule": {"title": "Large Order Rule", "type": "exclusionary", "effective_from": "2022-01-01",
                                 "modifies": ["avg_order_amount"]}}},
}


def dbt(root: Path, *args: str) -> subprocess.CompletedProcess:
    """The project's own dbt command, in a process of its own, as its owners run it."""
    return subprocess.run([sys.executable, "-c", DBT, *args, "--project-dir", str(root), "--profiles-dir", str(root)],
                          cwd=root, capture_output=True, text=True, timeout=600)


def quoted_columns(root: Path) -> None:
    """The orders model's store column named `Store Name`, and two more: `select` and `Payment` (quote: true)."""
    (root / "models" / "shop" / "orders.sql").write_text(ORDERS_SQL, encoding="utf-8")
    (root / "models" / "shop" / "metrics" / "avg_order_amount.sql").write_text(METRIC_SQL, encoding="utf-8")
    for rel in ("models/shop/_orders.yml", "models/shop/metrics/_metrics.yml"):
        path = root / rel
        props = yaml.safe_load(path.read_text(encoding="utf-8"))
        columns = props["models"][0]["columns"]
        store = next(c for c in columns if c["name"] == "store")
        store.update(name="Store Name", quote=True)
        dimension = "dimension" in json.dumps(store)
        columns.append({"name": "select", "description": "The channel of the order: web or till.",
                        **({"config": {"meta": {"dptool": {"dimension": "categorical", "label": "channel"}}}}
                           if dimension else {})})
        columns.append({"name": "Payment", "description": "How the order was paid: card or cash.", "quote": True,
                        **({"config": {"meta": {"dptool": {"dimension": "categorical", "label": "payment"}}}}
                           if dimension else {})})
        path.write_text(yaml.safe_dump(props, sort_keys=False), encoding="utf-8")


def set_up(root: Path) -> None:
    proc = run_cli("init", "--project-dir", str(root))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for command in ("deps", "build"):
        proc = dbt(root, command)
        assert proc.returncode == 0, proc.stdout[-3000:]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """Quoted dimension columns and a rule macro that reads the graph, in one project: (root, generate's process)."""
    root = tmp_path_factory.mktemp("breakers") / "project"
    shutil.copytree(FIXTURE, root, ignore=IGNORED)
    quoted_columns(root)
    (root / "macros" / "rule__large_orders_only.sql").write_text(GRAPH_RULE, encoding="utf-8")
    rules = yaml.safe_load((root / "macros" / "_rules.yml").read_text(encoding="utf-8"))
    rules["macros"].append(LARGE_ORDERS)
    (root / "macros" / "_rules.yml").write_text(yaml.safe_dump(rules, sort_keys=False), encoding="utf-8")
    set_up(root)
    proc = run_cli("generate", "--project-dir", str(root), "--out", str(root / "bundle"), "--target", "60",
                   "--min-per-type", "0")
    return root, proc


def _tasks(root: Path) -> list[dict]:
    return [json.loads(line) for line in (root / "bundle" / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]


def test_dimension_columns_that_need_quoting_give_tasks_and_no_sql_error(hostile):
    root, proc = hostile
    assert proc.returncode == 0, proc.stdout + proc.stderr
    card = (root / "bundle" / "card.md").read_text(encoding="utf-8")
    assert "SQL error" not in card and "Parser Error" not in card
    tasks = _tasks(root)
    kinds = {t["analysis_type"] for t in tasks if t["dimension"] == "Store Name"}
    assert {"ranking", "decomposition", "comparison"} <= kinds, kinds  # its groups, once dropped on SQL errors
    con = duckdb.connect(str(root / "bundle" / "warehouse.duckdb"), read_only=True)
    try:
        for t in tasks:
            if t["dimension"] in ("Store Name", "select", "Payment") and t["gold_sql"]:
                assert con.execute(t["gold_sql"]).fetchall(), t["task_id"]
    finally:
        con.close()


def test_every_shape_quotes_its_groups_through_the_adapter(hostile):
    """Grouped, ranking, stats and support queries by each column, built by dbt: `Payment` is quoted because the
    project declares it so (`quote: true`), `select` because it is reserved, `Store Name` for its space."""
    root, _ = hostile
    folder = root / "models" / "quoting"
    folder.mkdir()
    calls = {"grouped": "shape='grouped'", "ranking": "shape='ranking', k=2", "stats": "shape='stats'"}
    for column in ("Store Name", "select", "Payment"):
        slug = re.sub(r"\W", "_", column).lower()
        for shape, args in calls.items():
            (folder / f"q_{slug}_{shape}.sql").write_text(
                f"{{{{ dptool.gold(metric='avg_order_amount', rules=['exclude_test_orders'], group_by=['{column}'], "
                f"{args}) }}}}\n", encoding="utf-8")
        (folder / f"q_{slug}_support.sql").write_text(
            f"{{{{ dptool.support(metric='avg_order_amount', group_by=['{column}'], entity=['{column}']) }}}}\n",
            encoding="utf-8")
    try:
        proc = dbt(root, "build", "--select", "path:models/quoting")
        assert proc.returncode == 0, proc.stdout[-3000:]
        compiled = (root / "target" / "compiled" / "corner_shop" / "models" / "quoting" / "q_payment_ranking.sql")
        assert 'group by "Payment"' in compiled.read_text(encoding="utf-8")
        con = duckdb.connect(str(root / "corner_shop.duckdb"), read_only=True)
        try:
            values = {row[0] for row in con.execute('select distinct "Payment" from main.q_payment_grouped').fetchall()}
            assert values == {"card", "cash"}
            assert con.execute('select count(*) from main.q_select_ranking').fetchone()[0] == 4  # 2 × base and gold
            assert con.execute('select min(support_entities) from main.q_store_name_support').fetchone()[0] == 1
        finally:
            con.close()
    finally:
        shutil.rmtree(folder)


def test_the_reserved_words_of_the_dbt_package_are_pythons():
    text = (Path(__file__).parent.parent / "dptool" / "dbt_package" / "macros" / "reserved_words.sql").read_text(
        "utf-8")
    block = text[text.index("macro reserved_words"):]
    assert set(re.findall(r"'([a-z_]+)'", block[block.index("return(["):])) == RESERVED


def test_a_rule_that_reads_the_graph_gives_tasks_and_the_project_still_parses(hostile):
    root, proc = hostile
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert any("large_orders_only" in t["rule_ids"] for t in _tasks(root))
    gold = root / "models" / "dptool_gold"
    using = [p for p in gold.glob("*.sql") if "large_orders_only" in p.read_text(encoding="utf-8")]
    assert using
    parsed = dbt(root, "parse")
    assert parsed.returncode == 0, parsed.stdout[-3000:]
    # the other rules are still called while dbt parses, so dbt docs list them among the model's macros
    assert any("rule__exclude_test_orders(" in p.read_text(encoding="utf-8") or "rule__exclude_test_orders]" in
               p.read_text(encoding="utf-8") for p in gold.glob("*.sql"))


def test_a_rule_that_returns_a_string_is_refused_in_one_line_before_any_model_is_written(tmp_path):
    root = tmp_path / "project"
    shutil.copytree(FIXTURE, root, ignore=IGNORED)
    (root / "macros" / "rule__exclude_refunds.sql").write_text(STRING_RULE, encoding="utf-8")
    proc = run_cli("init", "--project-dir", str(root))
    assert proc.returncode == 0, proc.stderr
    assert dbt(root, "deps").returncode == 0
    built = dbt(root, "build", "--exclude", "avg_order_amount__rule_variants")  # its proof fails on the rule too
    assert built.returncode == 0, built.stdout[-3000:]
    proc = run_cli("generate", "--project-dir", str(root), "--out", str(root / "bundle"), "--target", "30",
                   "--min-per-type", "0")
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "error: rule macro 'rule__exclude_refunds' returned the text 'status <> 'refunded'', not the query spec q "
        "(metric 'avg_order_amount'); a rule changes q and returns it: {{ return(q) }}"]
    assert not (root / "models" / "dptool_gold").exists()
    assert not (root / "bundle").exists()
    assert dbt(root, "parse").returncode == 0
