"""`dptool rule new` to a benchmark: a scaffold left as it is ships nothing, said in one warning; once its document
has its `## Rule` section and `Effective date` line written, it gives its knowledge tasks (the subscriptions fixture,
from the command line)."""

from __future__ import annotations

import json

from dptool.project.dbt import DbtProject
from tests.subscriptions import GENERATE_ARGS, cli, copy_fixture, set_up

DOCUMENT = """\
{% docs rule__refund_window %}
# Refund window

Refunds reverse billings only within the refund window.

Effective date: 1 March 2024

## Rule

An invoice refunded within **14 days** of its invoice date leaves Gross Billings; a refund after 14 days is a
separate credit and the invoice still counts.
{% enddocs %}
"""


def _generate(root, out):
    DbtProject(root).run("parse")
    proc = cli("generate", "--project-dir", str(root), "--out", str(out), *GENERATE_ARGS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tasks = [json.loads(line) for line in (out / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    return proc.stdout, tasks


def test_a_scaffold_left_as_it_is_ships_nothing_and_a_written_one_gives_its_knowledge_tasks(tmp_path):
    root = copy_fixture(tmp_path / "project")
    set_up(root)
    made = cli("rule", "new", "refund_window", "--metric", "billings", "--project-dir", str(root))
    assert made.returncode == 0, made.stderr
    assert "the date on its `Effective date` line; a TODO left there gives none)" in made.stdout
    stdout, tasks = _generate(root, tmp_path / "scaffold")
    # issue 28: the scaffold's TODO document was shipped in kb/rules/, and nothing said why it gave no task
    assert stdout.count("warning: rule refund_window (macro.subscriptions.rule__refund_window) is still the `dptool "
                        "rule new` scaffold: its macro returns q unchanged and its document is a TODO, so it is left "
                        "out (no task, no kb/rules/ document) until both are written") == 2  # running, and at the end
    assert (tmp_path / "scaffold" / "kb" / "subscriptions" / "rules").is_dir()  # kb/<domain>/rules/: the layout
    assert not list((tmp_path / "scaffold" / "kb").glob("**/refund_window.md"))
    assert not [t for t in tasks if "refund_window" in t["rule_ids"]]

    (root / "macros" / "dptool_rules" / "rule__refund_window.md").write_text(DOCUMENT, encoding="utf-8")
    props = root / "macros" / "dptool_rules" / "rule__refund_window.yml"
    props.write_text(props.read_text(encoding="utf-8").replace('# effective_from: "2024-01-01"',
                                                               'effective_from: "2024-03-01"'), encoding="utf-8")
    stdout, tasks = _generate(root, tmp_path / "written")
    assert "refund_window" not in stdout
    known = {t["answer_format"].get("asks", "rule"): t for t in tasks
             if t["analysis_type"] == "knowledge_retrieval" and t["rule_ids"] == ["refund_window"]}
    assert set(known) == {"rule", "effective_date"}
    assert "14" in known["rule"]["gold"]["facts"] and known["effective_date"]["gold"]["facts"] == ["2024-03-01"]
    # the document's own title heading, once (issue 28: kb/rules/*.md repeated it)
    kb = (tmp_path / "written" / "kb" / "subscriptions" / "rules" / "refund_window.md").read_text(encoding="utf-8")
    assert kb.startswith("# Refund window\n\nRefunds reverse billings") and kb.count("# Refund window") == 1
