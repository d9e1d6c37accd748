"""DP-Bench §5 scoring against a fixture computed by hand (tests/fixtures/dp/score_expected.yml)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from dptool.dp import dpjson
from dptool.dp.score import normalized_ast, question_columns, score, similarity
from tests.conftest import run_cli

FIXTURES = Path(__file__).parent / "fixtures" / "dp"
EXPECTED = yaml.safe_load((FIXTURES / "score_expected.yml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def report():
    return score(dpjson.read(FIXTURES / "score_pred.json"), dpjson.read(FIXTURES / "score_gold.json"))


def _exact(actual: dict, expected: dict) -> None:
    assert actual.keys() == expected.keys()
    for key, value in expected.items():
        if isinstance(value, dict):
            _exact(actual[key], value)
        else:
            assert actual[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key


@pytest.mark.parametrize("subset", ["all", "hard"])
def test_score_reproduces_the_hand_computed_numbers(report, subset):
    _exact(report.summary(hard_only=subset == "hard"), EXPECTED[subset])


def test_derived_columns_pair_uniquely_for_the_greatest_total(report):
    shop_sales = next(s for s in report.scores if s.dp_id == "shop_sales")
    assert [p[:2] for p in shop_sales.pairs] == [tuple(p[:2]) for p in EXPECTED["pairs"]]
    assert [p[2] for p in shop_sales.pairs] == pytest.approx([p[2] for p in EXPECTED["pairs"]], rel=1e-12)
    assert report.unmatched == EXPECTED["unmatched"]


def test_unanswerable_questions_name_the_columns_they_lack(report):
    by_id = {s.dp_id: s for s in report.scores}
    assert by_id["shop_sales"].missing == ["customers.id, orders.customer_id"]
    assert by_id["shop_people"].missing == ["customers.name"]


@pytest.mark.parametrize(("a", "b"), [
    ("SELECT SUM(i.price) AS revenue FROM items AS i", "select sum(price) from items"),
    ("SELECT a FROM t WHERE x = 1 AND (y = 2 OR z = 3)", "SELECT tt.a AS b FROM t AS tt WHERE (3 = tt.z AND tt.x = 1) "
                                                         "OR (tt.y = 2 AND 1 = tt.x)"),
])
def test_equivalent_statements_normalize_to_one_ast(a, b):
    schema = {"items": {"price": "double"}, "t": {"a": "int", "x": "int", "y": "int", "z": "int"}}
    assert similarity(normalized_ast(a, "duckdb", schema), normalized_ast(b, "duckdb", schema)) == 1.0


def test_similarity_counts_every_change_against_every_step():
    # remove MAX, insert MIN, move the column; keep select, from, table and column: 1 - 3/7
    x, y = normalized_ast("SELECT MIN(t.v) FROM t", "duckdb"), normalized_ast("SELECT MAX(t.v) FROM t", "duckdb")
    assert similarity(x, y) == pytest.approx(4 / 7)


def test_question_columns_include_join_keys_and_expanded_stars():
    gold = dpjson.read(FIXTURES / "score_gold.json")
    shop = gold.databases["shop"]
    assert question_columns("SELECT c.state FROM orders AS o JOIN customers AS c ON c.id = o.customer_id", shop,
                            "duckdb") == {("customers", "state"), ("customers", "id"), ("orders", "customer_id")}
    tiny = gold.databases["tiny"]
    assert question_columns("SELECT * FROM stock", tiny, "duckdb") == {("stock", "sku"), ("stock", "qty"),
                                                                       ("stock", "location")}


def test_cli_prints_the_table_and_writes_the_report(tmp_path):
    out = tmp_path / "report.json"
    proc = run_cli("dp", "score", str(FIXTURES / "score_pred.json"), str(FIXTURES / "score_gold.json"),
                   "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    lines = [" ".join(line.split()) for line in proc.stdout.splitlines()]
    assert "columns, non-derived 0.583 0.367 0.444 3" in lines
    assert "columns, incl. derived 0.667 0.571 0.611 3" in lines
    assert "derived (soft) 0.262 0.393 0.314 2" in lines
    assert "execution accuracy (oracle): 4/6 = 66.7%" in proc.stdout
    assert "Hard subset: 2 data products" in proc.stdout
    assert "predicted data products with no gold (ignored): ghost" in proc.stdout
    saved = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert saved["all"]["execution_accuracy_oracle"]["answerable"] == 4


def test_a_gold_file_without_the_database_is_one_line(tmp_path):
    gold = dpjson.read(FIXTURES / "score_gold.json")
    gold.databases.pop("tiny")
    dpjson.write(gold, tmp_path / "gold.json")
    proc = run_cli("dp", "score", str(FIXTURES / "score_pred.json"), str(tmp_path / "gold.json"))
    assert proc.returncode == 1
    assert proc.stderr == ("error: gold data product 'tiny_stock': the file has no database 'tiny' (needed for the "
                           "Hard subset and the questions' columns)\n")


HOLES = yaml.safe_load((FIXTURES / "holes" / "expected.yml").read_text(encoding="utf-8"))


def _shop_sales(name: str):
    report = score(dpjson.read(FIXTURES / "holes" / name), dpjson.read(FIXTURES / "score_gold.json"))
    return next(s for s in report.scores if s.dp_id == "shop_sales")


def _check(name: str):
    got, want = _shop_sales(name), HOLES[name]
    for metric in ("non_derived", "with_provenance", "derived"):
        prf = getattr(got, metric)
        assert [prf.precision, prf.recall, prf.f1] == pytest.approx(want[metric], rel=1e-12, abs=1e-15), metric
    assert got.answerable == want["answerable"]
    assert [list(c) for c in got.copies] == want["copies"]
    assert [name for name, _ in got.rejected] == [name for name, _ in want["rejected"]]
    for (_, why), (_, expected) in zip(got.rejected, want["rejected"], strict=True):
        assert why.startswith(expected), why
    return got


def test_source_columns_are_read_from_the_sql_not_from_the_claims():
    got = _check("claims.json")
    assert got.missing == ["customers.state", "customers.id, customers.state, orders.customer_id"]


def test_a_select_1_column_claiming_every_column_scores_0():
    got = _check("select_1.json")
    assert all(similarity == 0.0 for _, _, similarity in got.pairs)


def test_a_derived_column_whose_sql_does_not_parse_scores_0_and_the_run_goes_on(tmp_path):
    _check("unparsable.json")
    proc = run_cli("dp", "score", str(FIXTURES / "holes" / "unparsable.json"), str(FIXTURES / "score_gold.json"),
                   "--out", str(tmp_path / "report.json"))
    assert proc.returncode == 0, proc.stderr
    assert "shop_sales.broken scores 0: cannot parse SQL (" in proc.stdout
    saved = yaml.safe_load((tmp_path / "report.json").read_text(encoding="utf-8"))
    shop = next(s for s in saved["data_products"] if s["dp_id"] == "shop_sales")
    assert shop["rejected"][0][0] == "broken" and shop["derived"]["f1"] == 0.5


def test_a_derived_column_that_only_copies_one_column_is_a_non_derived_column_of_its_table():
    _check("copy.json")


def test_gold_id_scores_one_prediction_of_another_id_against_that_gold_alone(tmp_path, report):
    """What `dp create` writes has its own id: --gold-id names the gold it is scored against, and the summary is that
    data product's score, not an average over every gold (issue 28: 0.054 on screen, 0.70 for the product)."""
    pred = dpjson.read(FIXTURES / "score_pred.json")
    mine = next(p for p in pred.data_products if p.id == "shop_sales")
    pred.data_products = [dataclasses.replace(mine, id="dp_created_by_me")]
    dpjson.write(pred, tmp_path / "pred.json")
    proc = run_cli("dp", "score", str(tmp_path / "pred.json"), str(FIXTURES / "score_gold.json"),
                   "--gold-id", "shop_sales", "--out", str(tmp_path / "report.json"))
    assert proc.returncode == 0, proc.stderr
    assert f"{tmp_path / 'pred.json'} against gold data product shop_sales" in proc.stdout
    saved = yaml.safe_load((tmp_path / "report.json").read_text(encoding="utf-8"))
    [alone] = [s for s in report.scores if s.dp_id == "shop_sales"]
    assert saved["all"]["data_products"] == 1
    assert saved["all"]["non_derived"]["f1"] == pytest.approx(alone.non_derived.f1)
    assert saved["all"]["with_provenance"]["f1"] == pytest.approx(alone.with_provenance.f1)
    assert "no gold" not in proc.stdout

    unknown = run_cli("dp", "score", str(tmp_path / "pred.json"), str(FIXTURES / "score_gold.json"),
                      "--gold-id", "nope")
    assert unknown.returncode == 1
    assert unknown.stderr == ("error: --gold-id 'nope': the gold file has no such data product (its data products: "
                              "shop_people, shop_sales, tiny_stock)\n")
    several = run_cli("dp", "score", str(FIXTURES / "score_pred.json"), str(FIXTURES / "score_gold.json"),
                      "--gold-id", "tiny_stock")
    assert several.returncode == 0, several.stderr  # several predictions: the one of that id
    assert "All: 1 data products" in several.stdout
