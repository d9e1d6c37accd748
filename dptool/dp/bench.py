"""The baselines over a set of data product requests, scored like DP-Bench Tables 2-6, in one table.

Every method builds a data product for each gold request over the gold data product's database; each set
is scored against the gold (dptool.dp.score). Rows: no search, hybrid search, the LLM when one is
configured, and the ground truth itself (the ceiling: its oracle accuracy proves the questions answerable).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlglot import exp

from dptool.dp import dpjson
from dptool.dp.baselines import HybridSearch, llm_create, no_search
from dptool.dp.lineage import parse
from dptool.dp.reads import question_columns
from dptool.dp.score import HARD_MIN_COLUMNS, Report, score
from dptool.errors import DptoolError
from dptool.llm.client import LLM
from dptool.outdir import check_files, write_files


@dataclass
class MethodResult:
    label: str
    predictions: dpjson.Document
    report: Report
    derives: bool  # the method writes derived columns (search does not: DP-Bench leaves it out of Table 4)
    notes: list[str]


def run(gold: dpjson.Document, *, llm: LLM | None = None, embedder: LLM | None = None,
        threshold: float | None = None, hard_min_columns: int = HARD_MIN_COLUMNS,
        echo: Callable[[str], None] = lambda _: None) -> list[MethodResult]:
    """Build and score every method's data products for the gold requests."""
    searches = {db_id: HybridSearch(db, embedder, threshold) for db_id, db in gold.databases.items()}
    methods: list[tuple[str, bool, Callable[[dpjson.DataProduct], tuple[dpjson.DataProduct, list[str]]]]] = [
        ("No search", False, lambda g: (no_search(gold.databases[g.db_id], g.id, g.request), [])),
        (next(iter(searches.values())).label if searches else "Hybrid search", False,
         lambda g: (searches[g.db_id].create(g.id, g.request), [])),
    ]
    if llm is not None:
        def by_llm(g: dpjson.DataProduct) -> tuple[dpjson.DataProduct, list[str]]:
            result = llm_create(llm, gold.databases[g.db_id], g.id, g.request, gold.dialect)
            notes = [f"{g.id}: {result.prompt}, {result.attempts} replies"]
            return result.product, notes + [f"{g.id}: dropped {d}" for d in result.dropped]

        methods.append((f"LLM ({llm.model})", True, by_llm))
    methods.append(("Ground truth", True, lambda g: (g, [])))

    results = []
    for label, derives, make in methods:
        echo(f"[bench] {label}")
        made, notes = [], []
        for g in sorted(gold.data_products, key=lambda d: d.id):
            product, why = make(g)
            made.append(product)
            notes.extend(why)
        predictions = dpjson.Document(gold.dialect, dict(gold.databases), made)
        results.append(MethodResult(label, predictions, score(predictions, gold, hard_min_columns), derives, notes))
    return results


def add_bundle_questions(gold: dpjson.Document, bundle: str | Path) -> tuple[dpjson.Document, int]:
    """Gold data products with the tasks of a `dptool generate` bundle that each one can answer.

    A task is relevant to a data product request when the gold data product holds every column the task's
    gold SQL reads (DP-Bench §4.5 keeps the questions whose columns its data products hold). The bundle's
    SQL names tables `<domain>.<table>`; the domain qualifier is dropped to read it over the database.
    """
    path = Path(bundle) / "tasks.jsonl"
    if not path.is_file():
        raise DptoolError(f"{path}: no tasks; pass the folder `dptool generate` wrote")
    tasks = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    products, added = [], 0
    for dp in gold.data_products:
        db, have = gold.databases[dp.db_id], dp.columns_with_provenance()
        extra = []
        for task in tasks:
            if task.get("domain") != dp.db_id or not task.get("gold_sql"):
                continue
            tree = parse(task["gold_sql"], "duckdb")  # the bundle's warehouse is DuckDB
            for table in tree.find_all(exp.Table):
                if table.db.lower() == dp.db_id.lower():
                    table.set("db", None)
            sql = tree.sql(gold.dialect)
            columns = question_columns(sql, db, gold.dialect)
            if columns and columns <= have:
                extra.append(dpjson.Question(task["question"], sql))
        added += len(extra)
        products.append(dpjson.DataProduct(dp.id, dp.db_id, dp.request, dp.tables, (*dp.questions, *extra),
                                           dp.dbt_models))
    return dpjson.Document(gold.dialect, dict(gold.databases), products), added


METRICS = ("non_derived", "with_provenance", "derived")


def cell(value: float | None) -> str:
    """A score as the table shows it: .xxx below 1, 1.00 at 1, — when there is none."""
    if value is None:
        return "—"
    return "1.00" if round(value, 3) >= 1 else f"{value:.3f}".replace("0.", ".", 1)


def _row(result: MethodResult, hard: bool) -> dict:
    summary = result.report.summary(hard_only=hard)
    row: dict = {"method": result.label}
    for key in METRICS:
        for metric in ("precision", "recall", "f1"):
            row[f"{key}_{metric}"] = summary[key].get(metric) if (key != "derived" or result.derives) else None
    row["execution_accuracy_oracle"] = summary["execution_accuracy_oracle"]["accuracy"]
    return row


def _part(results: list[MethodResult], hard: bool) -> dict:
    """One table as data: what its averages are taken over, and a row per method.

    The counts depend on the gold only (a data product without derived gold columns has no derived recall),
    so one set of counts holds for every row.
    """
    summary = results[0].report.summary(hard_only=hard) if results else {}
    return {
        "data_products": summary.get("data_products", 0),
        "averaged_over": {key: summary[key]["n"] for key in METRICS} if summary else {},
        "questions": summary["execution_accuracy_oracle"]["questions"] if summary else 0,
        "rows": [_row(r, hard) for r in results] if summary.get("data_products") else [],
    }


def table(results: list[MethodResult]) -> dict:
    """The results as data, cell for cell what `markdown` shows: all data products and the Hard subset."""
    return {"all": _part(results, False), "hard": _part(results, True)}


def markdown(results: list[MethodResult], hard_min_columns: int = HARD_MIN_COLUMNS) -> str:
    """The results table, DP-Bench style (Tables 2, 4 and 6 side by side), each with what it averages over."""
    data = table(results)
    head = ("| Method | Non-derived P | R | F1 | Incl. derived P | R | F1 | Derived sP | sR | sF1 | Oracle EX |\n"
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")

    def lines(part: dict) -> list[str]:
        n = part["averaged_over"]
        out = [f"Averages over {n['non_derived']} data products (non-derived), {n['with_provenance']} (incl. "
               f"derived), {n['derived']} with derived gold columns (derived, soft); oracle EX over "
               f"{part['questions']} questions.", "", head]
        for row in part["rows"]:
            cells = [cell(row[f"{k}_{m}"]) for k in METRICS for m in ("precision", "recall", "f1")]
            ex = row["execution_accuracy_oracle"]
            out.append(f"| {row['method']} | " + " | ".join(cells) + f" | {'—' if ex is None else f'{ex:.1%}'} |")
        return out

    every, hard = data["all"], data["hard"]
    out = [f"All data products ({every['data_products']} requests):", "", *lines(every), ""]
    if hard["rows"]:
        out += [f"Hard subset ({hard['data_products']} data products over databases with ≥ {hard_min_columns} "
                "columns):", "", *lines(hard), ""]
    else:
        out += [results[0].report.empty_hard() + "." if results else "Hard subset: empty.", ""]
    return "\n".join(out)


def write(results: list[MethodResult], out_dir: str | Path, hard_min_columns: int = HARD_MIN_COLUMNS) -> list[Path]:
    """dp_bench.md, dp_bench.json (the table and every method's per-data-product scores and notes) and each
    method's predictions as a DP-Bench file."""
    payload = {"hard_min_columns": hard_min_columns, "table": table(results),
               "methods": {r.label: {**r.report.to_dict(), "notes": r.notes} for r in results}}
    texts = {"dp_bench.md": markdown(results, hard_min_columns) + "\n",
             "dp_bench.json": json.dumps(payload, indent=2, sort_keys=True) + "\n"}
    texts.update({f"predictions_{_file_part(r.label)}.json": dpjson.dumps(r.predictions) for r in results})
    return write_files(out_dir, texts)  # dptool.outdir's rule: a file of the user's there is refused


def check_out(out_dir: str | Path) -> None:
    """Refuse `out_dir` before any work when a file `write` would replace there is not one dptool wrote."""
    out = Path(out_dir)
    check_files(out, ["dp_bench.md", "dp_bench.json", *(p.name for p in (out.glob("predictions_*.json")
                                                                         if out.is_dir() else []))])


def _file_part(label: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in label.lower()).strip("_").replace("__", "_")
