"""Which tasks a command works on (dptool.evaluate.select): ids, types, domains, tiers, a stratified sample."""

from __future__ import annotations

from collections import Counter

import pytest

from dptool.errors import DptoolError
from dptool.evaluate.select import Selection, read_ids, stratified

TYPES = ("knowledge_retrieval", "point_query", "ranking", "trend_analysis")
TASKS = [{"task_id": f"{d[0]}{t[:2]}{i:03d}", "domain": d, "analysis_type": t,
          "tier": "knowledge" if t == "knowledge_retrieval" else "knowledge+analytics+rule"}
         for d, n in (("bank", 1), ("shop", 3)) for t in TYPES for i in range(10 * n)]


def test_every_task_unless_told():
    assert Selection().apply(TASKS) == TASKS and Selection().everything


def test_by_id_type_domain_and_tier_in_bundle_order():
    chosen = Selection(types=("ranking", "point_query"), domains=("bank",)).apply(TASKS)
    assert {(t["domain"], t["analysis_type"]) for t in chosen} == {("bank", "ranking"), ("bank", "point_query")}
    assert chosen == [t for t in TASKS if t in chosen]
    assert [t["task_id"] for t in Selection(tasks=("str001", "bpo000")).apply(TASKS)] == ["bpo000", "str001"]
    assert {t["tier"] for t in Selection(tiers=("knowledge",)).apply(TASKS)} == {"knowledge"}


def test_a_sample_is_stratified_by_domain_and_type_and_seeded():
    sample = Selection(sample=20).apply(TASKS)
    counts = Counter((t["domain"], t["analysis_type"]) for t in sample)
    assert len(sample) == 20 and len(counts) == 8  # every stratum, the large ones more
    assert all(counts[("shop", t)] > counts[("bank", t)] for t in TYPES)
    assert Selection(sample=20).apply(TASKS) == sample
    assert Selection(sample=20, seed=7).apply(TASKS) != sample
    # the first N tasks are all of one type (issue 24: `eval --limit 20` ran 20 knowledge tasks)
    assert {t["analysis_type"] for t in TASKS[:10]} == {"knowledge_retrieval"}
    assert len(stratified(TASKS, 3, 42)) == 3  # fewer than the strata: the largest shares


def test_a_task_keeps_its_place_in_the_sample_whatever_the_other_tasks():
    # a bundle with more tasks of other types: the sample of the shared types, per stratum, is the same
    more = TASKS + [{**t, "task_id": t["task_id"] + "x", "analysis_type": "comparison"} for t in TASKS[:40]]
    picked = {t["task_id"] for t in Selection(types=("ranking",), sample=6).apply(TASKS)}
    assert picked == {t["task_id"] for t in Selection(types=("ranking",), sample=6).apply(more)}


@pytest.mark.parametrize("selection, message", [
    (Selection(types=("rankings",)), "--type rankings: no analysis type of the bundle is called that"),
    (Selection(domains=("retail",)), "--domain retail: no domain of the bundle is called that"),
    (Selection(tiers=("gold",)), "--tier gold: no tier of the bundle is called that"),
    (Selection(tasks=("nope", "none")), "--tasks nope: no task id of the bundle is called that (2 such)"),
    (Selection(types=("ranking",), domains=("bank",), tiers=("knowledge",)), "holds no task of the bundle"),
])
def test_a_selection_of_nothing_is_one_error(selection, message):
    with pytest.raises(DptoolError, match="^.*" + message.replace("(", r"\(").replace(")", r"\)")):
        selection.apply(TASKS)


def test_ids_from_the_command_line_or_a_file(tmp_path):
    assert read_ids("a,b, c,a") == ("a", "b", "c")
    (tmp_path / "ids.txt").write_text("# the hard ones\nrk_1\n\ncmp_2  # a comment\n", encoding="utf-8")
    assert read_ids(f"@{tmp_path / 'ids.txt'}") == ("rk_1", "cmp_2")
    with pytest.raises(DptoolError, match="cannot read"):
        read_ids(f"@{tmp_path / 'none.txt'}")


def test_by_metric_and_by_rule():
    tasks = [{"task_id": f"t{i}", "domain": "shop", "analysis_type": "point_query", "tier": "knowledge+analytics+rule",
              "metric_ids": [metric, *parts], "rule_ids": rules}
             for i, (metric, parts, rules) in enumerate([("aov", [], ["refunds"]), ("gmv_per_seller", ["gmv"], []),
                                                         ("gmv", [], ["refunds", "vat"])])]
    # the metric a task asks for, not one a composite is made of
    assert [t["task_id"] for t in Selection(metrics=("gmv",)).apply(tasks)] == ["t2"]
    assert [t["task_id"] for t in Selection(rules=("refunds",)).apply(tasks)] == ["t0", "t2"]
    assert [t["task_id"] for t in Selection(rules=("vat",), metrics=("aov", "gmv")).apply(tasks)] == ["t2"]
    assert Selection(metrics=("aov",), rules=("vat",)).describe() == "metric aov, rule vat"
    with pytest.raises(DptoolError, match=r"^--metric revenue: no metric of the bundle is called that; the bundle "
                                          r"has: aov, gmv, gmv_per_seller$"):
        Selection(metrics=("revenue",)).apply(tasks)
    with pytest.raises(DptoolError, match=r"^--rule fx: no rule of the bundle is called that; the bundle has: "
                                          r"refunds, vat$"):
        Selection(rules=("fx",)).apply(tasks)


def test_run_json_records_metrics_and_rules_only_when_given():
    # a run folder written before --metric and --rule existed resumes: its selection reads back equal
    old = {"tasks": [], "types": ["ranking"], "domains": [], "tiers": [], "sample": None, "seed": 42}
    assert Selection(types=("ranking",)).as_dict() == old
    assert Selection.from_dict(old) == Selection(types=("ranking",))
    new = Selection(metrics=("aov",), rules=("vat",))
    assert Selection.from_dict(new.as_dict()) == new and new.as_dict()["rules"] == ["vat"]
