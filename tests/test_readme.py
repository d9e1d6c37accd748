"""The tour in README.md and docs/*.md is what a real run printed (docs/tour.json, by tests/readme.py), and what the
code does now."""

from __future__ import annotations

import json
import re

import pytest

from tests import readme


@pytest.fixture(scope="module")
def tour() -> dict:
    return json.loads(readme.TOUR.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def text() -> str:
    return readme.pages_text()


def test_every_tour_section_is_what_the_recorded_run_gives(text, tour):
    assert readme.stale(text, tour) == [], "run `python -m tests.readme render` (or `make readme` after a change)"


def test_every_section_the_tour_writes_is_in_the_readme(text, tour):
    used = {m.group("name") for m in readme.SECTION.finditer(text)}
    assert used == set(readme.sections(tour))


def test_a_number_changed_by_hand_is_found(text, tour):
    start = text.index("<!-- tour:scores -->")
    line = next(i for i in range(start, len(text)) if text.startswith("accuracy 100.0 %", i))
    edited = text[:line] + "accuracy 99.0 %" + text[line + len("accuracy 100.0 %"):]
    assert readme.stale(edited, tour) == ["scores"]
    tasks = text.index("<!-- tour:tasks -->") + len("<!-- tour:tasks -->")
    assert readme.stale(text[:tasks] + "9" + text[tasks:], tour) == ["tasks"]


def test_the_command_list_is_what_dptool_prints_now(tour):
    assert readme.help_text() == tour["help"], "a command was added, renamed or redescribed: run `make readme`"


def test_the_example_task_is_asked_by_the_test_sessions_bundle_with_the_same_gold(demo_bundle, tour):
    # ids name questions: the test session's smaller demo bundle asks the tour's example too
    example = tour["example"]
    tasks = {t["task_id"]: t for t in readme.tasks_of(demo_bundle[0])}
    assert example["task_id"] in tasks, f"{example['task_id']} is no longer asked: run `make readme`"
    now = readme.shortened(tasks[example["task_id"]])
    assert now == example


def test_the_number_of_tests_is_what_the_tour_says(request, tour):
    from _pytest.config import Config

    if request.config.args_source != Config.ArgsSource.TESTPATHS or request.config.option.keyword \
            or request.config.option.markexpr:
        pytest.skip("counts the tests only when the whole suite is collected (`make test`)")
    assert len(request.session.items) == tour["tests_collected"], "tests were added or removed: run `make readme`"


def test_the_ten_claims_the_tour_once_got_wrong(text, tour):
    # the one-liner that runs gold_sql must pick a task that has one (the first task may be a knowledge task)
    assert "if t['gold_sql']" in text or "t.get('gold_sql')" in text
    assert "models/dptool_rules/rule__discount_cap.md" not in text  # rule new writes macros/dptool_rules/
    assert "`dbt test --selector dptool_gold` runs the rule tests alone" not in text
    assert "t_0644" not in text and tour["example"]["task_id"] in text


PROCESS_WORDS = re.compile(r"\bissue \d+|\bissue's\b|\bsession's machine|\bthis session\b|\bthe lead\b|"
                           r"\bblind analysts?\b|\bhelper\b|\bthis machine\b", re.IGNORECASE)
HEADING = re.compile(r"^#{1,6} (.*)$")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(page) -> set[str]:
    out, fenced = set(), False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and (m := HEADING.match(line)):
            out.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return out


def test_the_readme_fits_a_newcomers_five_minutes():
    lines = readme.README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300
    assert any(line.startswith("## Quickstart") for line in lines)


def test_readme_and_docs_speak_of_the_product_alone():
    found = [f"{page.name}: {m.group(0)!r}" for page in readme.PAGES
             for m in PROCESS_WORDS.finditer(page.read_text(encoding="utf-8"))]
    assert found == []


def test_every_relative_link_of_readme_and_docs_resolves():
    broken = []
    for page in readme.PAGES:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            path, _, anchor = target.partition("#")
            if re.match(r"^[a-z]+:", path):
                continue
            dest = (page.parent / path).resolve() if path else page.resolve()
            if not dest.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []
