"""An inspect-ai eval log of the dptool task as a dptool run folder (BRIEF's run folder contract), for `dptool score`.

A sample is one attempt of a task (attempt = epoch). Its answer is the one the task's scorer compared (the score's
`answer`), or, for a sample that was not scored, the answer in its last reply; a sample that ended on an error or a
limit has none. Its transcript holds its messages, its score, its error and its limit. A log that is not a whole run
(an eval that errored or was interrupted, or a sample that errored) is refused unless `allow_incomplete`: then
run.json says `"complete": false`. The folder is written whole or not at all, and the same log gives the same bytes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from dptool.errors import DptoolError
from dptool.evaluate.limits import EPOCHS, out_of_range
from dptool.files.names import transcript_name
from dptool.outdir import rename_staged, staging_folder

SOURCE = "inspect"


def import_log(log: Path, out: Path, allow_incomplete: bool = False) -> str:
    """Write OUT (new or empty) from the eval log LOG; a one-line summary of what was written."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise DptoolError("dptool inspect-import needs inspect-ai: pip install 'dbt-dptool[inspect]'") from None
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise DptoolError(f"{out}: exists and is not an empty folder; choose a new --out")
    try:
        ev = read_eval_log(str(log))
    except Exception as exc:  # noqa: BLE001 - inspect raises many kinds for a file it cannot read
        raise DptoolError(f"{log}: not an inspect eval log ({type(exc).__name__}: "
                          f"{' '.join(str(exc).split())[:200]})") from None
    meta = (ev.eval.metadata or {}).get("dptool")
    if not isinstance(meta, dict) or not meta.get("bundle"):
        raise DptoolError(f"{log}: not a log of the dptool task (its metadata has no bundle fingerprint); run "
                          "`inspect eval dptool/benchmark -T bundle=BUNDLE`")
    samples = sorted(ev.samples or [], key=lambda s: (s.epoch, str(s.id)))
    if not samples:
        raise DptoolError(f"{log}: holds no samples (status {ev.status}); was it written with --no-log-samples?")
    epochs = ev.eval.config.epochs or 1
    problem = out_of_range("epochs", epochs, EPOCHS) or next(
        (f"sample {s.id!r} has epoch {s.epoch!r}, not 1 to {epochs}" for s in samples
         if isinstance(s.epoch, bool) or not isinstance(s.epoch, int) or not 1 <= s.epoch <= epochs), None)
    if problem:
        raise DptoolError(f"{log}: {problem}; nothing was written")
    incomplete = _incomplete(ev, samples)
    if incomplete and not allow_incomplete:
        raise DptoolError(f"{log}: {incomplete}; its score would not be the model's: run it again "
                          "(`inspect eval-retry`), or import it as an incomplete run with --allow-incomplete")
    fp = meta["bundle"]
    settings = {**{k: v for k, v in meta.items() if k != "bundle"}, "bundle": fp, "source": SOURCE,
                "epochs": epochs, "model": ev.eval.model, "inspect_log": log.name,
                "inspect_eval_id": ev.eval.eval_id, "inspect_status": ev.status, "complete": not incomplete}
    if ev.eval.config.turn_limit is not None:  # inspect's --turn-limit overrides the task's max_turns
        settings["max_turns"] = ev.eval.config.turn_limit
    records, transcripts = [], {}
    for sample in samples:
        name = transcript_name(str(sample.id), sample.epoch)  # a sample id is data: never a path
        record, transcript = _attempt(sample, fp)
        records.append({**record, "transcript": f"transcripts/{name}"})
        transcripts[name] = transcript
    _write_folder(out, settings, records, transcripts)
    answered = sum(1 for r in records if r["answer"] is not None)
    tasks = len({r["task_id"] for r in records})
    return (f"{len(records)} attempts of {tasks} tasks ({settings['epochs']} epoch"
            f"{'s' if settings['epochs'] != 1 else ''}), {answered} answered, model {ev.eval.model} -> {out}"
            + (f" (incomplete: {incomplete})" if incomplete else ""))


def _incomplete(ev, samples) -> str | None:
    """Why the log is not a whole run, or None."""
    if ev.status != "success":
        what = {"cancelled": "was interrupted", "started": "never finished", "error": "ended on an error"}.get(
            ev.status, f"has status {ev.status!r}")
        why = f" ({' '.join(ev.error.message.split())[:160]})" if ev.error and ev.error.message else ""
        return f"the eval {what}{why}"
    errored = [s for s in samples if s.error]
    if errored:
        first = errored[0]
        return (f"{len(errored)} of {len(samples)} samples ended on an error (sample {first.id!r} epoch "
                f"{first.epoch}: {' '.join(first.error.message.split())[:160]})")
    return None


def _attempt(sample, fp: str) -> tuple[dict, dict]:
    """The answers.jsonl record and the transcript of one sample."""
    from dptool.evaluate.inspect_task import final_answer

    score = next(iter((sample.scores or {}).values()), None)
    if sample.error or sample.limit:  # it never gave its final reply
        answer = None
    elif score is not None:
        answer = score.answer
    else:
        answer = final_answer(sample.output.completion) if sample.output and sample.output.choices else None
    messages = [m.model_dump(mode="json", exclude_none=True) for m in sample.messages]
    tool_messages = [m for m in sample.messages if m.role == "tool"]
    sql_errors = sum(1 for m in tool_messages if m.function == "execute_sql"
                     and (m.error is not None or str(m.text).startswith("error:")))
    usage = list((sample.model_usage or {}).values())
    stop = "error" if sample.error else _limit_stop(sample.limit) if sample.limit else (
        sample.output.stop_reason if sample.output else None)
    record = {"task_id": str(sample.id), "attempt": int(sample.epoch), "bundle": fp, "answer": answer,
              "stop": stop, "turns": sum(1 for m in sample.messages if m.role == "assistant"),
              "seconds": round(sample.total_time, 3) if sample.total_time is not None else None,
              "tool_calls": len(tool_messages), "sql_errors": sql_errors,
              "prompt_tokens": sum(u.input_tokens for u in usage),
              "completion_tokens": sum(u.output_tokens for u in usage)}
    transcript = {"task_id": str(sample.id), "attempt": int(sample.epoch), "bundle": fp, "source": SOURCE,
                  "answer": answer, "messages": messages,
                  "score": None if score is None else {"value": score.value, "explanation": score.explanation,
                                                       "kind": (score.metadata or {}).get("kind")},
                  "error": sample.error.message if sample.error else None,
                  "limit": sample.limit.model_dump(mode="json") if sample.limit else None}
    return record, transcript


def _limit_stop(limit) -> str:
    """The `stop` of a sample ended by a limit: `max_turns` as `dptool eval` says it, else `<type>_limit`."""
    return "max_turns" if limit.type == "turn" else f"{limit.type}_limit"


def _write_folder(out: Path, settings: dict, records: list[dict], transcripts: dict[str, dict]) -> None:
    """OUT written in a temporary sibling, then renamed into place: a failure leaves nothing behind."""
    tmp = staging_folder(out)
    try:
        (tmp / "transcripts").mkdir()
        (tmp / "run.json").write_text(json.dumps(settings, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        with open(tmp / "answers.jsonl", "w", encoding="utf-8", newline="\n") as f:
            for record in records:
                f.write(json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n")
        for name, transcript in transcripts.items():
            (tmp / "transcripts" / name).write_text(
                json.dumps(transcript, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
        if out.exists():
            out.rmdir()  # empty, checked above
        rename_staged(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
