"""Hostile files handed to `dptool score` and `compare`: text no UTF-8 file can hold, counts that would fill the
memory, answers of a hundred megabytes, run.json of the wrong shape, UTF-16 from PowerShell, NaN; and what dptool
writes, read by teammates (the user's umask, not tempfile's private modes). Real files, a real small bundle, the
command as a user runs it."""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import stat
import tracemalloc
from pathlib import Path

import pytest

from dptool.errors import DptoolError
from dptool.evaluate import answers_file
from dptool.evaluate.answers_file import Oversized, load_answers, load_run
from dptool.evaluate.score import score
from dptool.files.jsontext import dumps, line
from dptool.outdir import write_file, write_files, write_text_atomic
from tests.conftest import run_cli
from tests.small_bundle import TASKS, write_bundle


def _strict(text: str):
    """JSON as a strict reader reads it: NaN and Infinity are no JSON."""
    def refuse(name):
        raise ValueError(f"{name} is not JSON")
    return json.loads(text, parse_constant=refuse)


def _jsonl(path: Path, *records: dict | str) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


def _one_line_error(proc) -> str:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    return write_bundle(tmp_path_factory.mktemp("hostile") / "bundle")


# ---- text no file can hold -----------------------------------------------------------------------------------------

def test_a_lone_surrogate_in_an_answer_or_a_task_id_is_said_and_the_reports_are_written(bundle, tmp_path):
    answers = tmp_path / "answers.jsonl"
    answers.write_text('{"task_id": "t_0001", "answer": "\\ud800 52 sellers"}\n'
                       '{"task_id": "t_0002", "answer": 3}\n'
                       '{"task_id": "t_\\udc00", "answer": 3}\n', encoding="utf-8")
    proc = run_cli("score", str(bundle), str(answers), "--out", str(tmp_path / "score"))
    assert proc.returncode == 0, proc.stderr
    assert "line 1: the answer holds \\ud800" in proc.stderr and "line 3: the task id holds \\udc00" in proc.stderr
    report = _strict((tmp_path / "score" / "score.json").read_text(encoding="utf-8"))
    first = next(r for r in report["results"] if r["task_id"] == "t_0001")
    assert not first["correct"] and first["failure"] == "malformed answer" and "\\ud800" in first["reason"]
    assert report["overall"]["correct"] == 1
    for name in ("score.md", "report.html"):
        (tmp_path / "score" / name).read_text(encoding="utf-8")  # UTF-8 throughout


def test_text_no_utf8_file_holds_is_written_as_its_escape_wherever_it_comes_from(tmp_path):
    # a file name with a byte that is no UTF-8 comes to Python as a lone surrogate: a report's title holds it
    value = {"title": "answers\udcff.jsonl", "nan": float("nan"), "inf": [float("-inf")], "pair": "\U0001f600"}
    text = dumps(value, levels=2)
    assert _strict(text) == {"title": "answers\udcff.jsonl", "nan": "NaN", "inf": ["-Infinity"], "pair": "\U0001f600"}
    text.encode("utf-8")
    write_files(tmp_path / "out", {"score.json": text, "score.md": "# answers\udcff.jsonl\n"})
    assert (tmp_path / "out" / "score.md").read_text(encoding="utf-8") == "# answers\\udcff.jsonl\n"


def test_a_nan_answer_is_written_as_json(bundle, tmp_path):
    assert _strict(line({"task_id": "t", "answer": float("nan")})) == {"task_id": "t", "answer": "NaN"}
    answers = _jsonl(tmp_path / "answers.jsonl", '{"task_id": "t_0001", "answer": NaN}',
                     '{"task_id": "t_0002", "answer": {"value": Infinity}}')
    proc = run_cli("score", str(bundle), str(answers), "--out", str(tmp_path / "score"))
    assert proc.returncode == 0, proc.stderr
    report = _strict((tmp_path / "score" / "score.json").read_text(encoding="utf-8"))
    assert report["overall"]["correct"] == 0
    assert {r["task_id"]: r["answer"] for r in report["results"]} == {"t_0001": "NaN",
                                                                       "t_0002": {"value": "Infinity"}}


def test_an_answer_with_a_key_twice_is_written_into_the_report(bundle, tmp_path):
    answers = _jsonl(tmp_path / "answers.jsonl", '{"task_id": "t_0001", "answer": 42, "answer": 42}')
    proc = run_cli("score", str(bundle), str(answers), "--out", str(tmp_path / "score"))
    assert proc.returncode == 0, proc.stderr
    report = _strict((tmp_path / "score" / "score.json").read_text(encoding="utf-8"))
    assert report["results"][0]["answer"] == {"reason": "malformed answer: the key 'answer' twice in its record"}


# ---- counts bounded before anything is allocated -------------------------------------------------------------------

def test_an_attempt_beyond_what_a_run_may_hold_is_not_scored(tmp_path):
    answers = load_answers(_jsonl(tmp_path / "a.jsonl", {"task_id": "zz", "attempt": 3_000_000, "answer": 1},
                                  {"task_id": "t_0001", "attempt": 101, "answer": 42},
                                  {"task_id": "t_0001", "attempt": 100, "answer": 42}))
    assert answers.attempts_held() == 100
    assert answers.problems == ["line 1: attempt 3000000 is beyond the 100 attempts a run may hold (the line is not "
                                "scored)", "line 2: attempt 101 is beyond the 100 attempts a run may hold (the line "
                                "is not scored)"]


def test_an_attempt_of_one_point_oh_is_attempt_one(tmp_path):
    answers = load_answers(_jsonl(tmp_path / "a.jsonl", {"task_id": "t_0001", "attempt": 1.0, "answer": 42},
                                  {"task_id": "t_0002", "attempt": 2.0, "answer": 3},
                                  {"task_id": "t_0002", "attempt": 1.5, "answer": 3}))
    assert answers.by_task == {"t_0001": 42} and answers.later == {("t_0002", 2): 3}
    assert answers.problems == ["line 3: attempt 1.5 is not a whole number from 1 (the line is not scored)"]
    assert score(TASKS[:1], answers, epochs=1)["overall"]["correct"] == 1


@pytest.mark.parametrize("epochs", [10_000_000, 0, "3", 2.5, None])
def test_a_run_whose_epochs_no_run_may_hold_is_refused_in_one_line(tmp_path, epochs):
    run = tmp_path / "run"
    run.mkdir()
    _jsonl(run / "answers.jsonl", {"task_id": "t_0001", "answer": 42})
    (run / "run.json").write_text(json.dumps({"epochs": epochs}), encoding="utf-8")
    with pytest.raises(DptoolError, match=r"run\.json: epochs is .*; expected a whole number from 1 to 100"):
        load_run(run)


@pytest.mark.parametrize("settings", ["[1, 2]", '"epochs"', "3", "null"])
@pytest.mark.parametrize("command", ["score", "compare"])
def test_a_run_json_that_is_no_object_is_refused_in_one_line(bundle, tmp_path, settings, command):
    run = tmp_path / "run"
    run.mkdir()
    _jsonl(run / "answers.jsonl", {"task_id": "t_0001", "answer": 42})
    (run / "run.json").write_text(settings, encoding="utf-8")
    args = ["score", str(bundle), str(run)] if command == "score" else ["compare", str(run), "--bundle", str(bundle)]
    error = _one_line_error(run_cli(*args, "--out", str(tmp_path / "out")))
    assert "run.json: holds a JSON" in error and "not the object of a run's settings" in error
    assert not (tmp_path / "out").exists()


# ---- answers too large to keep -------------------------------------------------------------------------------------

def _big_answer(n: int) -> bytes:
    return b"[" + b",".join([b"123456.5"] * n) + b"]"


def test_an_oversized_answer_is_kept_by_size_and_digest_in_bounded_memory(tmp_path):
    answer = _big_answer(2_500_000)  # 22.5 MB: as JSON in Python, some 100 MB of floats and lists
    path = tmp_path / "answers.jsonl"
    path.write_bytes(b'{"answer": ' + answer + b', "task_id": "t_0001", "attempt": 1}\n'
                     + json.dumps({"task_id": "t_0002", "answer": 3}).encode() + b"\n")
    tracemalloc.start()
    try:
        answers = load_answers(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * len(answer), f"{peak:,} bytes to read a {len(answer):,}-byte answer"
    kept = answers.by_task["t_0001"]
    assert isinstance(kept, Oversized) and kept.bytes == len(answer)
    assert kept.sha256 == hashlib.sha256(answer).hexdigest()
    assert answers.by_task["t_0002"] == 3 and answers.problems == []


def test_an_oversized_answer_scores_wrong_and_the_report_stays_small(bundle, tmp_path):
    answer = _big_answer(400_000)
    path = tmp_path / "answers.jsonl"
    path.write_bytes(b'{"task_id": "t_0001", "answer": ' + answer + b'}\n{"task_id": "t_0002", "answer": 3}\n')
    proc = run_cli("score", str(bundle), str(path), "--out", str(tmp_path / "score"))
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "score" / "score.json").read_text(encoding="utf-8")
    assert len(text) < 20_000
    report = _strict(text)
    first = next(r for r in report["results"] if r["task_id"] == "t_0001")
    assert not first["correct"] and first["answer"]["bytes"] == len(answer)
    assert first["answer"]["sha256"] == hashlib.sha256(answer).hexdigest()
    assert report["overall"]["correct"] == 1


def test_a_large_answer_under_the_limit_is_not_a_line_per_number_in_the_report(bundle, tmp_path):
    answers = _jsonl(tmp_path / "answers.jsonl", {"task_id": "t_0001", "answer": {"rows": [[i, i] for i in
                                                                                            range(20_000)]}})
    proc = run_cli("score", str(bundle), str(answers), "--out", str(tmp_path / "score"))
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "score" / "score.json").read_text(encoding="utf-8")
    assert text.count("\n") < 300 and len(text) < 3 * len(answers.read_text(encoding="utf-8"))


def test_a_long_line_is_skimmed_as_json_reads_it(tmp_path):
    big = '"' + "x" * 1_200_000 + '"'
    path = _jsonl(tmp_path / "a.jsonl",
                  # the task id inside the answer is the answer's, not the record's
                  '{"answer": [{"task_id": "t_0002"}, ' + big + '], "task_id": "t_0001", "seconds": 2.5}',
                  '{"task_id": "t_0002", "task_id": "t_0003", "answer": ' + big + '}',
                  '  \ufeff{"task_id": "t_0003", "answer": 3, "transcript": ' + big + ', "attempt": 2}  ',
                  '{"task_id": "t_0004", "answer": ' + big + '} extra',
                  '[' + big + ']',
                  '{"task_id": "t_0005", "answer": {"value": ' + big + '}')
    answers = load_answers(path)
    assert set(answers.by_task) == {"t_0001"} and isinstance(answers.by_task["t_0001"], Oversized)
    assert answers.stats[("t_0001", 1)] == {"seconds": 2.5}
    assert answers.later == {("t_0003", 2): 3}
    assert answers.problems == ["line 2: the key 'task_id' twice", "line 4: not JSON", "line 5: not JSON",
                                "line 6: not JSON"]


def test_a_line_longer_than_any_record_is_not_read(tmp_path, monkeypatch):
    monkeypatch.setattr(answers_file, "LINE_BYTES", 3_000_000)
    body = b'{"task_id": "t_0001", "answer": ' + _big_answer(400_000) + b"}\n"
    path = tmp_path / "a.jsonl"
    path.write_bytes(body + b'{"task_id": "t_0002", "answer": 3}\n')
    answers = load_answers(path)
    assert answers.by_task == {"t_0002": 3}
    assert answers.problems == [f"line 1: {len(body):,} bytes, over the 3,000,000 a line may hold; not read (sha256 "
                                f"{hashlib.sha256(body).hexdigest()})"]


# ---- encodings, selections -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32", "utf-8-sig"])
def test_an_answers_file_with_a_byte_order_mark_is_read_in_its_encoding(tmp_path, encoding):
    text = '{"task_id": "t_0001", "answer": "42 €"}\r\n{"task_id": "t_0002", "answer": 3}\r\n'
    data = text.encode(encoding)
    if encoding == "utf-16-be":
        data = codecs.BOM_UTF16_BE + data
    (tmp_path / "a.jsonl").write_bytes(data)
    answers = load_answers(tmp_path / "a.jsonl")
    assert answers.by_task == {"t_0001": "42 €", "t_0002": 3} and answers.problems == []


def test_utf16_without_a_byte_order_mark_is_refused_in_one_line_naming_it(bundle, tmp_path):
    (tmp_path / "a.jsonl").write_bytes('{"task_id": "t_0001", "answer": 42}\n'.encode("utf-16-le"))
    error = _one_line_error(run_cli("score", str(bundle), str(tmp_path / "a.jsonl"), "--out", str(tmp_path / "s")))
    assert "a.jsonl: holds NUL bytes: UTF-16 or UTF-32 without a byte order mark?" in error


def test_answers_to_tasks_not_selected_are_not_selected_not_strangers(bundle, tmp_path):
    answers = _jsonl(tmp_path / "a.jsonl", {"task_id": "t_0001", "answer": 42}, {"task_id": "t_0002", "answer": 3},
                     {"task_id": "zz", "answer": 1})
    proc = run_cli("score", str(bundle), str(answers), "--tasks", "t_0001", "--out", str(tmp_path / "score"))
    assert proc.returncode == 0, proc.stderr
    assert "answers for 1 task of the bundle not selected, not scored: t_0002" in proc.stderr
    report = _strict((tmp_path / "score" / "score.json").read_text(encoding="utf-8"))
    assert report["answers_file"]["unknown_task_ids"] == ["zz"] and report["overall"]["n"] == 1


# ---- files readable by teammates -----------------------------------------------------------------------------------

def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(params=[0o022, 0o027])
def umask(request):
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def test_what_dptool_writes_has_the_users_umask(tmp_path, umask):
    bundle = write_bundle(tmp_path / "bundle")  # staged in a temporary folder and renamed, as generate does
    assert _mode(bundle) == 0o777 & ~umask
    answers = tmp_path / "answers.jsonl"
    write_file(answers, json.dumps({"task_id": "t_0001", "answer": 42}) + "\n")
    write_text_atomic(tmp_path / "run.json", "{}\n")
    proc = run_cli("score", str(bundle), str(answers), "--out", str(tmp_path / "score"))
    assert proc.returncode == 0, proc.stderr
    files = [bundle / "card.md", bundle / "tasks.jsonl", answers, tmp_path / "run.json",
             *(tmp_path / "score" / name for name in ("score.json", "score.md", "report.html"))]
    assert {f.name: oct(_mode(f)) for f in files} == {f.name: oct(0o666 & ~umask) for f in files}
    assert _mode(tmp_path / "score") == 0o777 & ~umask
    proc = run_cli("compare", str(answers), "--bundle", str(bundle), "--out", str(tmp_path / "compare"))
    assert proc.returncode == 0, proc.stderr
    assert {oct(_mode(p)) for p in (tmp_path / "compare").iterdir()} == {oct(0o666 & ~umask)}


def test_a_file_of_a_million_bad_lines_makes_a_short_report(bundle, tmp_path):
    answers = tmp_path / "a.jsonl"
    answers.write_text('{"task_id": "t_0002", "answer": 3}\n' + "x\n" * 200_000 + '{"task_id": "t_0001", "answer": '
                       '42, "attempt": "' + "9" * 100_000 + '"}\n', encoding="utf-8")
    proc = run_cli("score", str(bundle), str(answers), "--out", str(tmp_path / "score"))
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stderr.splitlines()) < 110 and "199,901 more lines with problems, not listed" in proc.stderr
    for name in ("score.json", "score.md", "report.html"):
        assert (tmp_path / "score" / name).stat().st_size < 30_000, name
    assert load_answers(answers).by_task == {"t_0002": 3}


def test_an_answer_nested_hundreds_deep_is_malformed_and_the_reports_are_written(bundle, tmp_path):
    answers = _jsonl(tmp_path / "a.jsonl", '{"task_id": "t_0001", "answer": ' + "[" * 900 + "]" * 900 + "}",
                     '{"task_id": "t_0002", "answer": {"value": [[[[3]]]]}}')
    proc = run_cli("score", str(bundle), str(answers), "--out", str(tmp_path / "score"))
    assert proc.returncode == 0, proc.stderr
    assert "line 1: the answer nests lists or objects more than 64 deep (the answer is malformed)" in proc.stderr
    assert "line 2" not in proc.stderr
    report = _strict((tmp_path / "score" / "score.json").read_text(encoding="utf-8"))
    assert [r["failure"] for r in report["results"]] == ["malformed answer", "malformed answer"]


@pytest.mark.parametrize(("settings", "said"), [
    ({"selection": {"sample": "abc"}}, 'selection.sample is "abc"; expected a whole number from 1'),
    ({"selection": {"tasks": 5}}, "selection.tasks is 5; expected a list of names"),
    ({"selection": {"types": [[1]]}}, "selection.types is [[1]]; expected a list of names"),
    ({"selection": [1]}, "selection is [1]; expected the mapping dptool writes"),
    ({"selection": {}, "pad": "x" * 1_000_001}, "over 1,000,000 bytes; it is the run's settings"),
])
def test_a_run_json_of_the_wrong_shape_is_refused_in_one_line(bundle, tmp_path, settings, said):
    run = tmp_path / "run"
    run.mkdir()
    _jsonl(run / "answers.jsonl", {"task_id": "t_0001", "answer": 42})
    (run / "run.json").write_text(json.dumps(settings), encoding="utf-8")
    error = _one_line_error(run_cli("score", str(bundle), str(run), "--out", str(tmp_path / "out")))
    assert f"run.json: {said}" in error


def test_a_line_that_is_not_utf8_is_said_and_read(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes('{"task_id": "t_0001", "answer": "42 €"}\n'.encode("cp1252")
                     + b'{"task_id": "t_0002", "attempt": 1e308, "answer": 3}\n')
    answers = load_answers(path)
    assert answers.by_task == {"t_0001": "42 \ufffd"}
    assert answers.problems[0] == "line 1: not UTF-8 at byte 37 (read with \ufffd in its place; save the file as UTF-8)"
    assert answers.problems[1].startswith("line 2: attempt 1000000000") and len(answers.problems[1]) < 150


def test_an_answers_file_whose_name_is_not_utf8_is_scored(bundle, tmp_path):
    answers = _jsonl(tmp_path / os.fsdecode(b"answers\xff.jsonl"), {"task_id": "t_0001", "answer": 42})
    proc = run_cli("score", str(bundle), str(answers), "--out", str(tmp_path / "score"))
    assert proc.returncode == 0, proc.stderr
    report = _strict((tmp_path / "score" / "score.json").read_text(encoding="utf-8"))
    assert report["title"] == "answers\udcff.jsonl on bundle"
    assert "# Scores: answers\\udcff.jsonl on bundle" in (tmp_path / "score" / "score.md").read_text(encoding="utf-8")
