"""The demo's data products end to end, on the session's throw-away copy of the demo project.

Once per module, with one `dbt docs generate` and one `dbt build`: `dptool dp create` (hybrid search, and
the LLM through the loopback Ollama server) writes two data products as models, `dbt docs generate` (of the
data products and what they read) compiles them and writes catalog.json, `dptool dp provenance
--no-docs-generate` writes every data-product column's lineage into the properties files, and `dbt build`
materializes the created data products (its parse puts the new descriptions in the manifest dbt docs serves).
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pytest
import sqlglot
from click.testing import CliRunner
from sqlglot import exp

from dptool.cli.main import main
from dptool.dp import bench, dpjson
from dptool.dp.products import load_products
from dptool.dp.score import score
from tests.conftest import REPO, copy_built_project
from tests.ollama_server import OllamaServer

PROPERTIES = ("models/ecommerce/data_products/_ecommerce__data_products.yml",
              "models/banking/data_products/_banking__data_products.yml")
REQUEST = "Collect data on delivery performance: how many days orders take to reach the customer, by customer state."
LLM_REPLY = {
    "reasoning": "Delivery time needs purchase and delivery dates; the state comes from customers.",
    "tables": [{"table_name": "orders", "columns": ["order_id", "customer_id", "order_purchase_timestamp",
                                                    "order_delivered_customer_date", "order_speed"]},
               {"table_name": "customers", "columns": ["customer_id", "customer_state"]}],
    "derived_columns": [
        {"column_name": "avg_delivery_days", "description": "Average days to deliver, per state.",
         "table_name": "customers",
         "sql": "SELECT c.customer_state, AVG(DATE_DIFF('day', o.order_purchase_timestamp, "
                "o.order_delivered_customer_date)) FROM orders AS o JOIN customers AS c "
                "ON c.customer_id = o.customer_id GROUP BY c.customer_state"},
        {"column_name": "is_fast", "description": "", "sql": "SELECT order_speed > 3 FROM orders"},
    ],
}


def _cli(args: tuple[str, ...], env: dict | None = None):
    """The command in process, from a throw-away working folder: what a relative default (`--out dp_bench`,
    the LLM reply cache under ./target/) would write never lands in the repository."""
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="dptool-test-") as folder:
        os.chdir(folder)
        try:
            return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)
        finally:
            os.chdir(here)


def _invoke(*args: str, env: dict | None = None):
    result = _cli(args, env)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def dp(demo_project, tmp_path_factory):
    # a copy of its own: the data products written into it must not reach other modules' copies of the demo
    demo_project = copy_built_project(demo_project, tmp_path_factory.mktemp("dp_demo") / "project")
    root = str(demo_project.project_dir)
    hybrid = _invoke("dp", "create", REQUEST, "--name", "late_deliveries", "--domain", "ecommerce",
                     "--project-dir", root)
    with OllamaServer() as server:
        server.chat_replies.append({"content": json.dumps(LLM_REPLY)})
        llm = _invoke("dp", "create", REQUEST, "--method", "llm", "--llm", "ollama:test-model", "--name",
                      "llm_deliveries", "--domain", "ecommerce", "--project-dir", root, env={"OLLAMA_HOST": server.url})
    # only the data products and what they read: a third of the time of the whole project's docs
    demo_project.run("docs", "generate", "--select", "+path:models/ecommerce/data_products",
                     "+path:models/banking/data_products", "+tag:dptool_dp")
    target = demo_project.project_dir / "target"
    compiled = json.loads((target / "manifest.json").read_text(encoding="utf-8"))  # every model's compiled SQL
    catalog = json.loads((target / "catalog.json").read_text(encoding="utf-8"))
    provenance = _invoke("dp", "provenance", "--no-docs-generate", "--project-dir", root)
    built = demo_project.run("build", "--select", "tag:dptool_dp")
    out = tmp_path_factory.mktemp("dp")
    products = load_products(compiled, catalog, "duckdb")
    gold = products.document
    dpjson.write(gold, out / "gold.json")
    manifest = json.loads((target / "manifest.json").read_text(encoding="utf-8"))  # what `dbt docs serve` shows
    return SimpleNamespace(root=demo_project.project_dir, hybrid=hybrid, llm=llm, built=built, provenance=provenance,
                           manifest=manifest, products=products, gold=gold, out=out)


def test_at_least_six_data_products_each_with_a_request_questions_and_derived_columns(dp):
    products = dp.gold.data_products
    assert Counter(p.db_id for p in products) == {"ecommerce": 7, "banking": 6}
    banking = {Path(dp.manifest["nodes"][m]["original_file_path"]).parent.as_posix() for p in products
               for m in p.dbt_models if p.db_id == "banking"}
    assert banking == {"models/banking/data_products"}
    for product in products:
        sentences = [s for s in re.split(r"(?<=\.)\s+", product.request) if s]
        assert 2 <= len(sentences) <= 4, (product.id, sentences)
        assert product.request.startswith("Collect data that will allow queries on")
        assert len(product.questions) >= 2 and product.derived_columns(), product.id
    multi = {p.db_id for p in products if len(p.dbt_models) > 1}
    assert multi == {"ecommerce", "banking"}, "in each domain, one data product spans several models"


def _relations(manifest: dict, names: set[str]) -> dict[str, str]:
    nodes = manifest["nodes"].values()
    return {n["name"]: n["relation_name"] for n in nodes if n.get("name") in names and n.get("relation_name")}


def _run(con, sql: str, relations: dict[str, str]):
    tree = sqlglot.parse_one(sql, read="duckdb")
    for table in tree.find_all(exp.Table):
        if not table.db and table.name in relations:
            real = sqlglot.to_table(relations[table.name], dialect="duckdb")
            table.set("db", real.args.get("db"))
            table.set("catalog", real.args.get("catalog"))
    return con.execute(tree.sql("duckdb")).fetchall()


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(float(a), float(b), rel_tol=1e-9)
    return a == b


def test_every_question_s_gold_sql_and_its_answer_from_the_data_product_agree(dp):
    tables = {t.name for db in dp.gold.databases.values() for t in db.tables}
    models = {m.split(".")[-1] for p in dp.gold.data_products for m in p.dbt_models}
    relations = _relations(dp.manifest, tables | models)
    con = duckdb.connect(str(dp.root / "dptool_demo.duckdb"), read_only=True)
    try:
        for product in dp.gold.data_products:
            for q in product.questions:
                gold, mine = _run(con, q.sql, relations), _run(con, q.dp_sql, relations)
                assert gold and len(gold) == len(mine), q.question
                pairs = [(a, b) for ra, rb in zip(gold, mine, strict=True) for a, b in zip(ra, rb, strict=True)]
                assert all(_same(a, b) for a, b in pairs), (q.question, gold, mine)
    finally:
        con.close()


def test_the_gold_data_products_hold_every_column_their_questions_read(dp):
    summary = score(dp.gold, dp.gold).summary()
    assert summary["execution_accuracy_oracle"]["accuracy"] == 1.0
    assert summary["execution_accuracy_oracle"]["questions"] == sum(len(p.questions) for p in dp.gold.data_products)
    assert all(summary[k]["f1"] == 1.0 for k in ("non_derived", "with_provenance", "derived"))


def _column(dp, model: str, column: str) -> dict:
    return dp.manifest["nodes"][f"model.dptool_demo.{model}"]["columns"][column]


def _provenance(dp, model: str, column: str) -> dict:
    # on the model, not the column: dbt docs shows a column's meta as one line that widens its row
    node = dp.manifest["nodes"][f"model.dptool_demo.{model}"]
    assert "provenance" not in node["columns"][column].get("meta", {}).get("dptool", {})
    return node["meta"]["dptool"]["column_provenance"][column]


def test_dbt_docs_show_each_column_s_sources_and_expression(dp):
    ratio = _column(dp, "dp_seller_scorecard", "freight_to_price_ratio")["description"]
    assert ratio.startswith("Freight charged per BRL of item price.\n\nProvenance: derived (an aggregate, through a "
                            "join) from order_items.freight_value (aggregate) and order_items.price (aggregate).\n\n"
                            "Expression:\n\n    it.freight_revenue / NULLIF(it.item_revenue, 0)\n\n"
                            "Computed from the tables by:\n\n    WITH items AS (\n")
    assert "\n    FROM sellers AS s\n" in ratio
    assert _provenance(dp, "dp_seller_scorecard", "freight_to_price_ratio")["edges"] == [
        {"source": "order_items.freight_value", "type": "aggregate"},
        {"source": "order_items.price", "type": "aggregate"}]
    # through the payments model into the table it reads (lineage across models)
    assert _provenance(dp, "dp_order_payment_totals", "order_id")["edges"] == [
        {"source": "order_payments.order_id", "type": "pass-through"}]
    # DP-Bench: a column copied from a table through a join is a non-derived column of that table
    state = _provenance(dp, "dp_delivery_performance", "customer_state")
    assert (state["derived"], state["through_join"], state["kind"]) == (False, True, "pass-through")
    assert _column(dp, "dp_delivery_performance", "customer_state")["description"] == (
        "Delivery state (two-letter code).\n\nProvenance: non-derived, a copy of customers.customer_state "
        "(pass-through), reached through a join on customers.customer_id, orders.customer_id.")
    assert _provenance(dp, "dp_category_sales", "category")["kind"] == "rename"
    assert _provenance(dp, "dp_loan_book", "region")["edges"] == [{"source": "district.A3", "type": "rename"}]
    for node in dp.manifest["nodes"].values():
        if node.get("meta", {}).get("dptool", {}).get("data_product"):
            assert set(node["meta"]["dptool"]["column_provenance"]) == set(node["columns"]), node["name"]
    assert "edges: aggregate" in dp.provenance and "pass-through" in dp.provenance


def _rows(con, sql: str) -> list[tuple]:
    """The rows, in one order that does not depend on the query's: floats rounded off their last bits."""
    rows = [tuple(round(v, 6) if isinstance(v, float) else v for v in row) for row in con.execute(sql).fetchall()]
    return sorted(rows, key=repr)


def test_every_derived_column_s_provenance_computes_the_model_s_column(dp):
    """Row for row: the provenance query has as many rows as the model and the same value in each (compared as
    sorted lists, the only order both share), for every derived column of every data product."""
    con = duckdb.connect(str(dp.root / "dptool_demo.duckdb"), read_only=True)
    products = dp.products
    checked, models = 0, set()
    try:
        for uid, model in products.models.items():
            relation = dp.manifest["nodes"][uid]["relation_name"]
            for name, col in model.columns.items():
                if not col.derived:
                    continue
                model_rows = _rows(con, f"select {name} from {relation}")
                assert _rows(con, col.provenance.sql("duckdb")) == model_rows, f"{model.name}.{name}"
                checked += 1
                models.add(model.dp_id)
    finally:
        con.close()
    assert checked == sum(len(p.derived_columns()) for p in products.document.data_products) >= 70
    assert len(models) >= 12


def test_a_data_product_s_page_shows_its_request_and_questions(dp):
    """The model that declares a data product shows, rendered by dbt docs as markdown, its request and every
    question with the SQL over the tables and from the data product; its other models point there."""
    for product in dp.gold.data_products:
        holders = [m for m in product.dbt_models
                   if dp.manifest["nodes"][m]["meta"]["dptool"]["data_product"].get("request")]
        [holder] = holders
        text = dp.manifest["nodes"][holder]["description"]
        assert f"\n\n### Data product request ({product.id})\n\n{product.request}\n\n### Questions it answers\n" in text
        for i, question in enumerate(product.questions, 1):
            assert f"\n{i}. {question.question}\n\n   Over the tables:\n\n   ```sql\n" in text
        assert text.count("   From the data product:\n\n   ```sql\n") == len(product.questions)
        for other in set(product.dbt_models) - {holder}:
            assert dp.manifest["nodes"][other]["description"].endswith(
                f"Part of data product {product.id}: its request and questions are on "
                f"{dp.manifest['nodes'][holder]['name']}.")


def test_a_column_s_provenance_reads_as_plain_text_when_dbt_docs_shows_it_collapsed(dp):
    """dbt docs shows a column's description collapsed as raw text on one line (and renders it as markdown only
    when expanded): no markdown sign may show there, and the SQL is an indented code block, the same as the
    provenance DP-Bench's export holds."""
    exported = {(p.id, d.name): d.provenance for p in dp.gold.data_products for d in p.derived_columns()}
    dp_of = {m: p.id for p in dp.gold.data_products for m in p.dbt_models}
    seen = 0
    for uid, node in dp.manifest["nodes"].items():
        if uid not in dp_of:
            continue
        for name, column in node["columns"].items():
            text = column["description"]
            collapsed = " ".join(text.split())
            assert not re.search(r"\*\*|`|#|\]\(", collapsed), (node["name"], name, collapsed[:120])
            human, _, provenance = text.partition("\n\nProvenance: ")
            assert human and "\n" not in human and provenance, (node["name"], name)
            if not node["meta"]["dptool"]["column_provenance"][name]["derived"]:
                continue
            block = provenance.split("Computed from the tables by:\n\n", 1)[1]
            assert all(line.startswith("    ") for line in block.splitlines())
            sql = "\n".join(line[4:] for line in block.splitlines())
            assert sql in {exported.get((dp_of[uid], name)), exported.get((dp_of[uid], f"{node['name']}__{name}"))}
            seen += 1
    assert seen >= 70


def test_the_committed_properties_files_are_what_dptool_dp_provenance_writes(dp):
    for path in PROPERTIES:
        written = (dp.root / path).read_text(encoding="utf-8")
        assert written == (REPO / path).read_text(encoding="utf-8"), "run `dptool dp provenance` and commit"
        assert f"wrote {path}" not in dp.provenance
    assert "wrote models/dptool_dp/llm_deliveries/_llm_deliveries.yml" in dp.provenance  # created ones get it too


def test_created_data_products_are_dbt_models_that_build(dp):
    assert "Hybrid search (BM25 only), threshold 0.2" in dp.hybrid
    assert "ollama:test-model, prompt dp_create_v1, 1 replies" in dp.llm
    assert "dropped (not in the database): column orders.order_speed" in dp.llm
    assert "dropped (not in the database): derived column is_fast (Column 'order_speed'" in dp.llm
    assert dp.built and all(r.status == "success" for r in dp.built if r.resource_type == "model")
    names = {r.name for r in dp.built if r.resource_type == "model"}
    assert {"llm_deliveries__orders", "llm_deliveries__customers", "llm_deliveries__avg_delivery_days"} <= names
    assert any(n.startswith("late_deliveries__") for n in names)
    con = duckdb.connect(str(dp.root / "dptool_demo.duckdb"), read_only=True)
    try:
        rows = con.execute("select count(*), count(avg_delivery_days) from dptool_dp.llm_deliveries__avg_delivery_days"
                           ).fetchone()
    finally:
        con.close()
    assert rows[0] > 10 and rows[0] == rows[1]  # one row per state, each with its average
    saved = dpjson.read(dp.root / "models/dptool_dp/llm_deliveries/llm_deliveries.dp.json")
    [product] = saved.data_products
    assert [d.name for d in product.derived_columns()] == ["avg_delivery_days"]


def test_export_reads_created_data_products_back_through_their_lineage(dp):
    out = dp.out / "created.json"
    output = _invoke("dp", "export", "--created", "--no-docs-generate", "--out", str(out), "--project-dir",
                     str(dp.root))
    assert "-> " in output
    created = {p.id: p for p in dpjson.read(out).data_products}
    assert set(created) == {"late_deliveries", "llm_deliveries"}
    llm = created["llm_deliveries"]
    assert ("orders", "order_purchase_timestamp") in llm.columns()
    # the derived model's group key, customer_state, is copied from customers through a join: DP-Bench calls it a
    # non-derived column of customers (read back from dbt)
    derived = {d.name: d for d in llm.derived_columns()}
    assert set(derived) == {"avg_delivery_days"}
    assert ("customers", "customer_state") in llm.columns()
    assert {("orders", "order_delivered_customer_date"), ("customers", "customer_state")} <= set(
        derived["avg_delivery_days"].source_columns)


def test_bench_builds_the_baselines_table_in_one_command(dp):
    out = dp.out / "bench"
    with OllamaServer() as server:
        reply = {"content": json.dumps(LLM_REPLY)}
        server.chat_replies.extend([reply] * len(dp.gold.data_products))
        # the LLM's and the embedder's replies are cached in the project's target/: here, a temporary folder
        output = _invoke("dp", "bench", "--gold", str(dp.out / "gold.json"), "--out", str(out), "--llm",
                         "ollama:test-model", "--embed-model", "ollama:test-model", "--project-dir", str(dp.out),
                         env={"OLLAMA_HOST": server.url})
    assert list((dp.out / "target" / "dptool_llm_cache").glob("*.json"))
    text = (out / "dp_bench.md").read_text(encoding="utf-8")
    assert text.strip() in output
    every, hard = text.split("\nHard subset")
    assert hard.startswith(" (6 data products over databases with ≥ 50 columns):")  # the banking ones
    data = json.loads((out / "dp_bench.json").read_text(encoding="utf-8"))["table"]
    assert (data["all"]["data_products"], data["hard"]["data_products"]) == (13, 6)
    for part, shown in ((data["all"], every), (data["hard"], hard)):
        n = part["averaged_over"]
        assert (f"Averages over {n['non_derived']} data products (non-derived), {n['with_provenance']} (incl. "
                f"derived), {n['derived']} with derived gold columns (derived, soft); oracle EX over "
                f"{part['questions']} questions.") in shown
        rows = [line for line in shown.splitlines() if line.startswith("| ") and "---" not in line][1:]
        assert [r.split(" | ")[0][2:] for r in rows] == [
            "No search", "Hybrid search (dense test-model 0.8 + BM25 0.2)", "LLM (test-model)", "Ground truth"]
        for line, row in zip(rows, part["rows"], strict=True):  # the JSON is the table, cell for cell
            cells = [bench.cell(row[f"{k}_{m}"]) for k in bench.METRICS for m in ("precision", "recall", "f1")]
            assert line == f"| {row['method']} | " + " | ".join(cells) + f" | {row['execution_accuracy_oracle']:.1%} |"
        cells = {r.split(" | ")[0][2:]: r.split(" | ")[1:] for r in rows}
        assert cells["No search"][1] == "1.00" and cells["No search"][4] == "1.00"  # recall: the whole database
        assert cells["No search"][6:9] == ["—", "—", "—"]  # search writes no derived column
        assert cells["Ground truth"] == ["1.00"] * 9 + ["100.0% |"]
    assert (out / "predictions_llm_test_model.json").is_file()


def test_bundle_tasks_that_a_data_product_answers_join_its_questions(tmp_path):
    gold = dpjson.read(Path(__file__).parent / "fixtures" / "dp" / "score_gold.json")
    tasks = [{"domain": "shop", "question": "How many orders are done?",
              "gold_sql": "SELECT COUNT(*) FROM \"shop\".\"orders\" WHERE status = 'done'"},
             {"domain": "shop", "question": "Names?", "gold_sql": "SELECT name FROM shop.customers"},
             {"domain": "shop", "question": "Knowledge only", "gold_sql": None}]
    (tmp_path / "tasks.jsonl").write_text("\n".join(json.dumps(t) for t in tasks) + "\n", encoding="utf-8")
    enriched, added = bench.add_bundle_questions(gold, tmp_path)
    by_id = {p.id: p for p in enriched.data_products}
    assert added == 2
    assert [q.question for q in by_id["shop_sales"].questions][-1] == "How many orders are done?"
    assert by_id["shop_sales"].questions[-1].sql == "SELECT COUNT(*) FROM \"orders\" WHERE status = 'done'"
    assert [q.question for q in by_id["shop_people"].questions][-1] == "Names?"
    assert len(by_id["tiny_stock"].questions) == 1


def _fails(*args: str) -> str:
    result = _cli(args)
    assert result.exit_code == 1, result.output
    [line] = result.output.splitlines()
    return line


def test_cli_errors_are_one_line(dp, tmp_path):
    root = str(dp.root)
    assert _fails("dp", "create", "x", "--domain", "nowhere", "--project-dir", root).startswith(
        "error: --domain 'nowhere': no agent-visible tables there (domains: ")
    assert _fails("dp", "create", "x", "--domain", "ecommerce", "--method", "llm", "--llm", "none",
                  "--project-dir", root) == ("error: --method llm needs an LLM: --llm ollama:MODEL, $DPTOOL_LLM or "
                                             "dbt_project.yml vars.dptool.llm")
    # a created data product writes its own id, never a hand-made one's (issue 28: then two data products of one id)
    assert _fails("dp", "create", "x", "--name", "delivery_performance", "--domain", "ecommerce",
                  "--project-dir", root) == (
        "error: --name delivery_performance: data product 'delivery_performance' is one of the project's own "
        "(models/ecommerce/data_products/_ecommerce__data_products.yml: model.dptool_demo.dp_delivery_performance); "
        "dp create writes its own id: choose another --name (to score it against delivery_performance: "
        "`dptool dp score PRED GOLD --gold-id delivery_performance`)")
    (tmp_path / "target").mkdir()
    (tmp_path / "dbt_project.yml").write_text("name: bare\n", encoding="utf-8")
    (tmp_path / "target" / "manifest.json").write_text(json.dumps(dp.manifest), encoding="utf-8")
    assert _fails("dp", "export", "--no-docs-generate", "--project-dir", str(tmp_path)) == (
        f"error: {tmp_path / 'target' / 'catalog.json'}: no catalog; run `dbt build` then `dbt docs generate` "
        "(or `dptool dp provenance`)")


def test_import_writes_a_dp_bench_file_as_models_over_the_project_s_tables(dp, tmp_path):
    output = _invoke("dp", "import", str(dp.out / "gold.json"), "--out-dir", str(tmp_path), "--project-dir",
                     str(dp.root))
    assert output.count(" files in ") == len(dp.gold.data_products)
    folder = tmp_path / "seller_scorecard"
    select = (folder / "seller_scorecard__sellers.sql").read_text(encoding="utf-8")
    assert select.endswith("select\n    seller_id,\n    seller_city,\n    seller_state\nfrom {{ ref('sellers') }}\n")
    ratio = (folder / "seller_scorecard__freight_to_price_ratio.sql").read_text(encoding="utf-8")
    assert "FROM {{ ref('sellers') }} AS s" in ratio and "FROM {{ ref('order_items') }} AS i" in ratio
    body = re.sub(r"\{\{ ref\('(\w+)'\) \}\}", r"\1", ratio.split("\n", 2)[2])
    assert [s.alias_or_name for s in sqlglot.parse_one(body, read="duckdb").selects] == ["freight_to_price_ratio"]
    again = dpjson.read(folder / "seller_scorecard.dp.json")
    assert again.data_products[0].columns() == next(p for p in dp.gold.data_products
                                                    if p.id == "seller_scorecard").columns()
