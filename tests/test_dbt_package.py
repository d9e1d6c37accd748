"""Integration tests of the dptool dbt package (dptool/dbt_package/integration_tests), built by dbt.

dbt-utils style: each public macro is proven by a model, an `<model>_expected` seed and the package's
own `dptool.equality` test. Nodes tagged `expect_fail` are negative proofs: their tests must fail.
Models under models/regressions/ once exposed package bugs; their tests must pass.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from dptool.project.dbt import DbtProject, NodeResult

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "dptool" / "dbt_package"
IGNORED = shutil.ignore_patterns(
    "target", "dbt_packages", "logs", "*.duckdb", "*.duckdb.wal", "package-lock.yml", "__pycache__"
)

# Tests that must pass: a dropped or renamed test must not go unnoticed.
PROVEN = [
    "equality__metric_query__value",
    "equality__metric_query__grouped",
    "equality__metric_query__ranking",
    "equality__metric_query__ranking_nulls_last",
    "equality__metric_query__where",
    "equality__metric_query__rule_or_predicate",
    "equality__metric_query__rule_column_override",
    "equality__metric_query__rule_having",
    "equality__gold__grouped",
    "rule_changes_answer__gold__grouped",
    # a rule may set q.where anew, keeping the caller's predicates (the question's slice)
    "equality__gold__rule_rewrites_where_keeping_slice",
    "rule_changes_answer__gold__rule_rewrites_where_keeping_slice",
    "equality__metric_variants__sales",
    "rule_changes_answer__metric_variants__sales",
    "equality__cross_db__days_between",
    "equality__cross_db__datediff_hours",
    "equality__cross_db__dateadd_year",
    "equality__cross_db__timestamp_literal",
    "equality__cross_db__timestamp_literal_value",
    "equality__cross_db__is_numeric_column",
    # the data makes the proofs possible: parentheses and the tiebreak change the answer
    "assert_or_predicate_needs_parentheses",
    "assert_ranking_cut_falls_in_a_tie",
    # regressions: a rule returning a new spec; 8-byte float comparison; DECIMAL(p, s) as a number
    "equality__regression__rule_returns_new_spec",
    "rule_changes_answer__regression__large_value_changed_by_cents",
    "equality__regression__decimal_vs_double",
    # composites: each component under its own rules, joined per group (and per period)
    "equality__composite__component_rule",
    "equality__composite__own_rule",
    "equality__composite__ranking",
    "equality__composite__series",
    "equality__composite__filtered_input",
    "equality__gold__composite",
    "rule_changes_answer__gold__composite",
    # support: the rows the value reads (not NULL), the entities among them, a rate's numerator events
    "equality__support__rests_on",
]

# expect_fail test -> how many rows it must return
EXPECT_FAIL = {
    "rule_changes_answer__expect_fail__rule_changes_nothing": 1,  # only the no-op variant
    "rule_changes_answer__expect_warn__rule_changes_nothing": 1,  # the same, at the package's default severity
    "equality__expect_fail__duplicated_row": 2,  # east x1 in the model, x2 in the seed
    "equality__expect_fail__one_value_off": 2,
    "equality__expect_fail__null_is_not_zero": 2,
    "equality__expect_fail__large_value_off_by_a_cent": 2,
}
@dataclass(frozen=True)
class Builds:
    main: dict[str, NodeResult]
    expect_fail: dict[str, NodeResult]


def _dbt(project: DbtProject, *args: str) -> dict[str, NodeResult]:
    return {r.name: r for r in project.run(*args)}


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> Builds:
    """The integration tests project, copied with the package around it (`local: ../`), built once."""
    root = tmp_path_factory.mktemp("dbt_package")
    shutil.copytree(PACKAGE_DIR, root / "dbt_package", ignore=IGNORED)
    project = DbtProject(root / "dbt_package" / "integration_tests")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DPTOOL_IT_DUCKDB", str(root / "integration_tests.duckdb"))
        _dbt(project, "deps")
        main = _dbt(project, "build", "--exclude", "tag:expect_fail")
        expect_fail = _dbt(project, "build", "--select", "tag:expect_fail")
    return Builds(main, expect_fail)


def _tests(nodes: dict[str, NodeResult]) -> dict[str, NodeResult]:
    return {name: n for name, n in nodes.items() if n.resource_type == "test"}


def test_every_node_passes(builds):
    assert builds.main, "the main build ran nothing"
    assert not [n.name for n in builds.main.values() if "expect_fail" in n.tags]
    failed = {
        n.name: f"{n.status}: {n.message}"
        for n in builds.main.values()
        if n.status not in ("success", "pass")
    }
    assert failed == {}


def test_every_macro_proof_ran_and_passed(builds):
    tests = _tests(builds.main)
    assert {name: tests[name].status if name in tests else "missing" for name in PROVEN} == dict.fromkeys(
        PROVEN, "pass"
    )


# expect_fail model -> what its compile error must say
EXPECT_ERROR = {
    # a composite read by a model that does not ref its components: dbt could not inject their CTEs
    "expect_fail__composite_without_refs": "is computed from 'sales', which model "
                                           "'expect_fail__composite_without_refs' does not ref",
    # a rule that sets q.where anew without the caller's predicates: every slice would get one gold
    "expect_fail__rule_drops_slice": "rule macro 'rule__delivered_only_dropping_slice' removed where `region = "
                                     "'south'` of metric 'sales' (the question's slice)",
}


def test_expect_fail_build_holds_exactly_the_negative_proofs(builds):
    assert set(_tests(builds.expect_fail)) == set(EXPECT_FAIL)
    models = [n for n in builds.expect_fail.values() if n.resource_type != "test" and n.name not in EXPECT_ERROR]
    assert models and all(n.status == "success" for n in models), models


@pytest.mark.parametrize("name", list(EXPECT_ERROR))
def test_negative_compile_error(builds, name):
    node = builds.expect_fail[name]
    assert node.status == "error" and EXPECT_ERROR[name] in (node.message or ""), node.message


@pytest.mark.parametrize("name", list(EXPECT_FAIL))
def test_negative_proof_fails(builds, name):
    node = builds.expect_fail[name]
    # rule_changes_answer warns unless a project sets severity: error (a rule with nothing to change on the
    # data is a finding, not a broken build)
    status = "warn" if "__expect_warn__" in name else "fail"
    assert (node.status, node.failures) == (status, EXPECT_FAIL[name]), node.message
