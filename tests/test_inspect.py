"""The inspect-ai task (issue 25): inspect's own eval of `dptool/benchmark` with its scripted model, 2 epochs, the
log turned into a run folder by `dptool inspect-import`, and `dptool score` reading it.

The scripted model (`mockllm/model`) is a function of the conversation, as a real model is: on the question it calls
execute_sql with real SQL, then a query the sandbox refuses, then answers with the gold-sql reference agent's answer.
Each of its outputs carries a usage: without one, mockllm counts tokens with tiktoken, which downloads its encoding.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.solver import generate

from dptool.bundle import fingerprint
from dptool.evaluate.inspect_task import benchmark
from dptool.evaluate.reference import reference_records
from dptool.evaluate.score import load_tasks
from dptool.evaluate.select import Selection
from tests.conftest import run_cli

SAMPLE = 20
EPOCHS = 2
COUNT_SQL = "SELECT count(*) AS n FROM ecommerce.orders"
REFUSED_SQL = "DROP TABLE ecommerce.orders"


def _usage(output: ModelOutput) -> ModelOutput:
    output.usage = ModelUsage(input_tokens=100, output_tokens=20, total_tokens=120)
    return output


def scripted(answers_by_question: dict[str, object]):
    """The model's outputs, from the conversation so far: SQL, refused SQL, then the answer of the question asked."""

    def outputs(messages, tools, tool_choice, config) -> ModelOutput:
        assert {t.name for t in tools} >= {"execute_sql", "search_kb", "get_kb_document", "list_metrics"}
        tool_replies = [m for m in messages if m.role == "tool"]
        if not tool_replies:
            return _usage(ModelOutput.for_tool_call("mockllm/model", "execute_sql", {"sql": COUNT_SQL}))
        if len(tool_replies) == 1:
            return _usage(ModelOutput.for_tool_call("mockllm/model", "execute_sql", {"sql": REFUSED_SQL}))
        question = next(m.text for m in messages if m.role == "user")
        answer = answers_by_question[question]
        text = answer if isinstance(answer, str) else json.dumps(answer)
        return _usage(ModelOutput.from_content("mockllm/model", f"Done.\n<answer>{text}</answer>"))

    return outputs


@pytest.fixture(scope="module")
def bundle(demo_bundle) -> Path:
    return demo_bundle[0]


@pytest.fixture(scope="module")
def inspect_run(bundle, tmp_path_factory):
    """inspect's eval of the task, 20 tasks, 2 epochs."""
    selected = Selection(sample=SAMPLE).apply(load_tasks(bundle))
    gold = {r["task_id"]: r["answer"] for r in reference_records(bundle, ("gold-sql",), selected)["gold-sql"]}
    root = tmp_path_factory.mktemp("inspect")
    questions = {s.input: gold[s.id] for s in benchmark(bundle=str(bundle), sample=SAMPLE).dataset}
    logs = inspect_eval(benchmark(bundle=str(bundle), sample=SAMPLE), epochs=EPOCHS,
                        model=get_model("mockllm/model", custom_outputs=scripted(questions)),
                        log_dir=str(root / "logs"), display="none", max_samples=4)
    return selected, logs[0], root


def test_inspect_s_eval_of_the_dptool_task_scores_with_dptool_s_comparison(inspect_run, bundle):
    selected, log, _ = inspect_run
    assert log.status == "success", log.error
    assert log.eval.metadata["dptool"]["bundle"] == fingerprint(bundle)
    assert len(log.samples) == SAMPLE * EPOCHS
    assert {(s.id, s.epoch) for s in log.samples} == {(t["task_id"], e) for t in selected for e in (1, 2)}
    metrics = log.results.scores[0].metrics
    assert metrics["accuracy"].value == 1.0
    for sample in log.samples:
        score = next(iter(sample.scores.values()))
        assert score.value == "C" and score.explanation == "correct", score
        tool_replies = [m for m in sample.messages if m.role == "tool"]
        with duckdb.connect(str(bundle / "warehouse.duckdb"), read_only=True) as con:
            (n,), = con.execute(COUNT_SQL).fetchall()
        assert tool_replies[0].text == f"n\n{n}\n(1 row)"  # real SQL, on the bundle's warehouse
        assert tool_replies[1].error is not None and tool_replies[1].error.message.startswith(
            "error: refused: DROP is DDL; execute_sql takes exactly one read-only SELECT or WITH query")
        assert sample.messages[0].role == "system" and "execute_sql(sql)" in sample.messages[0].text
        assert all(sample.target not in m.text for m in sample.messages[:2])  # the target never reaches the model


# inspect's eval of the task by the name `inspect eval dptool/benchmark` takes (found through the package's entry
# point), in a process of its own started outside the repository: there a dptool/ folder would be read as the path
BY_NAME = """
import sys
from inspect_ai import eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model
output = ModelOutput.from_content("mockllm/model", "<answer>I do not know</answer>")
output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
log, = eval("dptool/benchmark", task_args={"bundle": sys.argv[1], "tasks": sys.argv[2]}, display="none",
            model=get_model("mockllm/model", custom_outputs=[output]), log_dir=sys.argv[3])
print(log.location)
"""


def test_inspect_finds_the_task_by_name_and_a_wrong_answer_s_reason_is_its_explanation(bundle, tmp_path):
    task = load_tasks(bundle)[0]
    proc = subprocess.run([sys.executable, "-c", BY_NAME, str(bundle), task["task_id"], str(tmp_path / "logs")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    log = read_eval_log(proc.stdout.strip())
    assert log.eval.task_registry_name == "dptool/benchmark" and log.eval.task_args["tasks"] == task["task_id"]
    score = next(iter(log.samples[0].scores.values()))
    assert score.value == "I" and score.answer == "I do not know"
    assert score.explanation and score.explanation != "correct" and score.metadata["kind"], score


def test_the_log_becomes_a_run_folder_dptool_score_reads(inspect_run, bundle, tmp_path):
    selected, log, _ = inspect_run
    out = tmp_path / "run"
    proc = run_cli("inspect-import", log.location, "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (f"{SAMPLE * EPOCHS} attempts of {SAMPLE} tasks ({EPOCHS} epochs), {SAMPLE * EPOCHS} "
                           f"answered, model mockllm/model -> {out}\n")
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert (run["bundle"], run["source"], run["epochs"], run["model"]) == (fingerprint(bundle), "inspect", EPOCHS,
                                                                          "mockllm/model")
    assert run["selection"] == Selection(sample=SAMPLE).as_dict()
    lines = [json.loads(line) for line in (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted((r["task_id"], r["attempt"]) for r in lines) == sorted(
        (t["task_id"], e) for t in selected for e in (1, 2))
    for record in lines:
        assert (record["tool_calls"], record["sql_errors"], record["turns"]) == (2, 1, 3), record
        assert (record["prompt_tokens"], record["completion_tokens"]) == (300, 60)
        transcript = json.loads((out / record["transcript"]).read_text(encoding="utf-8"))
        assert transcript["score"]["value"] == "C" and transcript["answer"] == record["answer"]
        assert [m["role"] for m in transcript["messages"]] == ["system", "user", "assistant", "tool", "assistant",
                                                               "tool", "assistant"]
    proc = run_cli("score", str(bundle), str(out), "--sample", str(SAMPLE), "--out", str(tmp_path / "score"))
    assert proc.returncode == 0, proc.stderr
    n = SAMPLE * EPOCHS  # every attempt of every task right: pass@1 and pass^k both 100 %
    assert f"accuracy (pass@1) 100.0 %: {n} of {n} attempts correct ({SAMPLE} tasks × {EPOCHS} attempts)" \
        in proc.stdout, proc.stdout
    assert f"pass^{EPOCHS} 100.0 %: {SAMPLE} of {SAMPLE} tasks right in every attempt" in proc.stdout
    # the same log, the same bytes; an existing folder is refused, untouched
    again = tmp_path / "again"
    assert run_cli("inspect-import", log.location, "--out", str(again)).returncode == 0
    for path in sorted(p for p in out.rglob("*") if p.is_file() and "score" not in p.parts):
        assert (again / path.relative_to(out)).read_bytes() == path.read_bytes(), path
    proc = run_cli("inspect-import", log.location, "--out", str(out))
    assert proc.returncode == 1
    assert proc.stderr == f"error: {out}: exists and is not an empty folder; choose a new --out\n"


def test_a_log_of_another_task_is_refused_in_one_line(tmp_path):
    other = Task(dataset=[Sample(input="hello", target="hi")], solver=generate(), name="other")
    logs = inspect_eval(other, model=get_model("mockllm/model", custom_outputs=[_usage(ModelOutput.from_content(
        "mockllm/model", "hi"))]), log_dir=str(tmp_path / "logs"), display="none")
    proc = run_cli("inspect-import", logs[0].location, "--out", str(tmp_path / "run"))
    assert proc.returncode == 1 and proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1
    assert "not a log of the dptool task" in proc.stderr and not (tmp_path / "run").exists()


def test_a_sample_searches_only_its_own_domain_s_knowledge_base(bundle, tmp_path):
    """Issue 26: an inspect sample's search_kb reads kb/<its domain>/, so a banking task never finds the
    marketplace's "Small-Sample Suppression" (50 records)."""
    tasks = load_tasks(bundle)
    picked = [next(t for t in tasks if t["domain"] == d) for d in ("banking", "ecommerce")]

    def outputs(messages, tools, tool_choice, config) -> ModelOutput:
        if not [m for m in messages if m.role == "tool"]:
            return _usage(ModelOutput.for_tool_call("mockllm/model", "search_kb",
                                                    {"query": "Small-Sample Suppression 50 records", "k": 20}))
        return _usage(ModelOutput.from_content("mockllm/model", "<answer>{}</answer>"))

    task = benchmark(bundle=str(bundle), tasks=",".join(t["task_id"] for t in picked))
    log, = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=outputs), log_dir=str(tmp_path / "logs"),
                        display="none")
    assert log.status == "success", log.error
    for sample in log.samples:
        domain = next(t["domain"] for t in picked if t["task_id"] == sample.id)
        (reply,) = [m.text for m in sample.messages if m.role == "tool"]
        paths = set(re.findall(r"^\[([^\]]+?) — ", reply, flags=re.MULTILINE))
        assert paths and all((bundle / "kb" / domain / p).is_file() for p in paths), (domain, paths)
        assert ("rules/small_sample_suppression.md" in paths) == (domain == "ecommerce")


# ---- sample ids as file names: whatever a log's ids are, every file inspect-import writes is inside --out --------

HOSTILE_IDS = {"parent": "../../../victim/notes", "absolute": "{root}/victim/absolute", "slash": "a/b",
               "long": "t" * 300}


def _answering(messages, tools, tool_choice, config) -> ModelOutput:
    return _usage(ModelOutput.from_content("mockllm/model", "<answer>52</answer>"))


def dptool_like_log(root: Path, ids: list[str], solver=None, **eval_args):
    """A real eval log of a task that carries the dptool task's metadata, with these sample ids (no bundle needed:
    inspect-import reads the log alone)."""
    task = Task(dataset=[Sample(input="How many?", target="52", id=i) for i in ids], solver=solver or generate(),
                name="dptool", metadata={"dptool": {"bundle": "0" * 64, "condition": "standard"}})
    log, = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=_answering),
                        log_dir=str(root / "logs"), display="none", **eval_args)
    return log


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("case", sorted(HOSTILE_IDS))
def test_a_sample_id_never_writes_outside_the_run_folder(case, tmp_path):
    root = tmp_path / "root"
    (root / "victim").mkdir(parents=True)
    (root / "victim" / "notes-1.json").write_text("the user's notes\n", encoding="utf-8")
    sample_id = HOSTILE_IDS[case].format(root=root)
    log = dptool_like_log(tmp_path, [sample_id, "t_0001"])
    before = _files(root)
    out = root / "x" / "run"
    proc = run_cli("inspect-import", log.location, "--out", str(out))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout.startswith("2 attempts of 2 tasks (1 epoch), 2 answered"), proc.stdout
    after = _files(root)
    assert {k: v for k, v in after.items() if not k.startswith("x/run/")} == before  # nothing else touched
    records = [json.loads(line) for line in (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(r["task_id"] for r in records) == sorted([sample_id, "t_0001"])
    for record in records:  # each transcript a plain file of transcripts/, holding its own sample
        path = out / record["transcript"]
        assert path.parent == out / "transcripts" and len(path.name) <= 120 and path.is_file(), record
        assert json.loads(path.read_text(encoding="utf-8"))["task_id"] == record["task_id"]
    assert {"t_0001-1.json"} < {p.name for p in (out / "transcripts").iterdir()}  # a plain id keeps its name


# ---- runs that are what they seem: a limit or an error is no answer, an incomplete log no silent run ------------

def _never_answering(messages, tools, tool_choice, config) -> ModelOutput:
    """A model that calls a tool at every turn, its text saying the gold of t_0002 (3) as if it were an answer
    (only after 40 turns, far past any budget, does it stop: a task with no limit ends, and the test fails)."""
    if sum(1 for m in messages if m.role == "assistant") >= 40:
        return _usage(ModelOutput.from_content("mockllm/model", "<answer>3</answer>"))
    return _usage(ModelOutput.for_tool_call("mockllm/model", "execute_sql", {"sql": "SELECT count(*) FROM shop.orders"},
                                            content="<answer>3</answer> Let me check once more."))


@pytest.fixture(scope="module")
def small_bundle(tmp_path_factory) -> Path:
    from tests.small_bundle import write_bundle

    return write_bundle(tmp_path_factory.mktemp("small") / "bundle")


def _eval(task, outputs, root: Path, **eval_args):
    log, = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=outputs), log_dir=str(root / "logs"),
                        display="none", **eval_args)
    return log


def test_a_model_that_never_stops_calling_tools_ends_at_eval_s_turn_budget_with_no_answer(small_bundle, tmp_path):
    from dptool.evaluate.agent import MAX_TURNS

    log = _eval(benchmark(bundle=str(small_bundle), tasks="t_0002"), _never_answering, tmp_path)
    assert log.status == "success", log.error
    sample, = log.samples
    assert (sample.limit.type, sample.limit.limit) == ("turn", MAX_TURNS)
    assert sum(1 for m in sample.messages if m.role == "assistant") == MAX_TURNS
    score = next(iter(sample.scores.values()))
    assert (score.value, score.answer, score.explanation, score.metadata["kind"]) == ("I", None, "no answer",
                                                                                      "no answer")
    out = tmp_path / "run"
    proc = run_cli("inspect-import", log.location, "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    record, = [json.loads(line) for line in (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert (record["answer"], record["stop"], record["turns"]) == (None, "max_turns", MAX_TURNS)
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert (run["complete"], run["max_turns"]) == (True, MAX_TURNS)
    transcript = json.loads((out / record["transcript"]).read_text(encoding="utf-8"))
    assert transcript["limit"]["type"] == "turn" and transcript["answer"] is None


def test_a_task_argument_or_inspect_s_own_limit_overrides_the_turn_budget_and_still_no_answer(small_bundle, tmp_path):
    log = _eval(benchmark(bundle=str(small_bundle), tasks="t_0002", max_turns=3), _never_answering, tmp_path / "a")
    sample, = log.samples
    assert (sample.limit.type, sample.limit.limit) == ("turn", 3)
    assert sum(1 for m in sample.messages if m.role == "assistant") == 3
    assert next(iter(sample.scores.values())).answer is None
    # inspect's --message-limit: the text before the last tool call was once scored as the answer
    log = _eval(benchmark(bundle=str(small_bundle), tasks="t_0002"), _never_answering, tmp_path / "b",
                message_limit=11)
    sample, = log.samples
    assert sample.limit.type == "message"
    score = next(iter(sample.scores.values()))
    assert (score.value, score.answer, score.explanation) == ("I", None, "no answer")
    with pytest.raises(ValueError, match="max_turns=0: expected 1 to 100"):
        benchmark(bundle=str(small_bundle), max_turns=0)
    with pytest.raises(ValueError, match="epochs is 10000000: expected 1 to 100"):
        benchmark(bundle=str(small_bundle), epochs=10_000_000)


def _failing(messages, tools, tool_choice, config) -> ModelOutput:
    if "fail" in messages[-1].text:
        raise RuntimeError("the model's server went away")
    return _answering(messages, tools, tool_choice, config)


def test_an_errored_log_is_refused_in_one_line_unless_imported_as_incomplete(tmp_path):
    task = Task(dataset=[Sample(input="fail now", target="52", id="t_0001"),
                         Sample(input="How many?", target="52", id="t_0002")],
                solver=generate(), name="dptool", metadata={"dptool": {"bundle": "0" * 64}})
    log, = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=_failing),
                        log_dir=str(tmp_path / "logs"), display="none", max_samples=1)
    assert log.status == "error", log.status
    out = tmp_path / "run"
    proc = run_cli("inspect-import", log.location, "--out", str(out))
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith(f"error: {log.location}: the eval ended on an error (") and \
        "--allow-incomplete" in proc.stderr, proc.stderr
    assert not out.exists() and proc.stdout == ""
    proc = run_cli("inspect-import", log.location, "--out", str(out), "--allow-incomplete")
    assert proc.returncode == 0, proc.stderr
    assert "(incomplete: the eval ended on an error" in proc.stdout
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert (run["complete"], run["inspect_status"]) == (False, "error")
    records = {r["task_id"]: r for r in map(json.loads, (out / "answers.jsonl").read_text(encoding="utf-8")
                                            .splitlines())}
    assert (records["t_0001"]["answer"], records["t_0001"]["stop"]) == (None, "error")


def test_a_finished_log_with_an_errored_sample_is_refused_too(tmp_path):
    task = Task(dataset=[Sample(input="fail now", target="52", id="t_0001"),
                         Sample(input="How many?", target="52", id="t_0002")],
                solver=generate(), name="dptool", metadata={"dptool": {"bundle": "0" * 64}})
    log, = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=_failing),
                        log_dir=str(tmp_path / "logs"), display="none", fail_on_error=False)
    assert log.status == "success" and sum(1 for s in log.samples if s.error) == 1
    proc = run_cli("inspect-import", log.location, "--out", str(tmp_path / "run"))
    assert proc.returncode == 1 and not (tmp_path / "run").exists()
    assert proc.stderr.startswith(f"error: {log.location}: 1 of 2 samples ended on an error (sample 't_0001' "
                                  "epoch 1: "), proc.stderr
    proc = run_cli("inspect-import", log.location, "--out", str(tmp_path / "run"), "--allow-incomplete")
    assert proc.returncode == 0, proc.stderr
    records = {r["task_id"]: r for r in map(json.loads, (tmp_path / "run" / "answers.jsonl").read_text(
        encoding="utf-8").splitlines())}
    assert (records["t_0001"]["answer"], records["t_0002"]["answer"]) == (None, "52")
    assert json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))["complete"] is False


def test_a_log_whose_epochs_are_out_of_bounds_is_refused(tmp_path):
    log = dptool_like_log(tmp_path, ["t_0001"])
    log.eval.config.epochs = 10_000_000
    from inspect_ai.log import write_eval_log

    write_eval_log(log, str(tmp_path / "big.eval"))
    proc = run_cli("inspect-import", str(tmp_path / "big.eval"), "--out", str(tmp_path / "run"))
    assert proc.returncode == 1 and not (tmp_path / "run").exists()
    assert proc.stderr == f"error: {tmp_path / 'big.eval'}: epochs is 10000000: expected 1 to 100; nothing was " \
                          "written\n"


def test_an_interrupted_log_is_refused_in_one_line(tmp_path):
    from inspect_ai.log import write_eval_log

    log = dptool_like_log(tmp_path, ["t_0001"])
    log.status = "cancelled"  # what inspect writes when the eval was stopped (Ctrl+C)
    write_eval_log(log, str(tmp_path / "stopped.eval"))
    proc = run_cli("inspect-import", str(tmp_path / "stopped.eval"), "--out", str(tmp_path / "run"))
    assert proc.returncode == 1 and not (tmp_path / "run").exists()
    assert proc.stderr.startswith(f"error: {tmp_path / 'stopped.eval'}: the eval was interrupted; its score would "
                                  "not be the model's"), proc.stderr
    proc = run_cli("inspect-import", str(tmp_path / "stopped.eval"), "--out", str(tmp_path / "run"),
                   "--allow-incomplete")
    assert proc.returncode == 0 and proc.stdout.endswith("(incomplete: the eval was interrupted)\n"), proc.stdout
    assert json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))["complete"] is False
