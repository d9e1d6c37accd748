"""The task flow of `dptool serve`: attempts handed out, calls recorded, answers taken, across agents and processes.

`next_task` hands out an attempt (a task's id, question and answer format, and the attempt's handle `attempt_id`);
`submit_answer(task_id, answer, attempt_id)` takes its answer. Every tool takes `attempt_id` optionally: a call is
recorded into the attempt it names; without it, into the caller's open attempt (the caller: one MCP session over
HTTP, one server process over stdio), else (not for an MCP session, whose calls are its own) into the folder's
single open attempt when there is exactly one (a stdio server per tool call), else into
transcripts/outside-tasks.jsonl.

The run folder (dptool.evaluate.run_folder) is the only state: an attempt is claimed under the folder's lock and
handed out once, answered once (a second answer is refused, naming the first), and each call is appended to its
attempt's log. An attempt whose server process is gone, unanswered, goes to the next caller that asks for a task
without having one open (a server per call, or a server started again, goes on with it); one held by a live
process is never handed to anyone else, but anyone may still use it by its handle.
"""

from __future__ import annotations

import datetime
import json
import os
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path
from string import Template
from typing import Any

from dptool.answers import holds_non_finite
from dptool.bundle import fingerprint
from dptool.errors import DptoolError
from dptool.evaluate import limits as limits_module
from dptool.evaluate.agent import format_hint
from dptool.evaluate.bundle_watch import BundleWatch
from dptool.evaluate.env_pool import MAX_ENVIRONMENTS, EnvironmentPool
from dptool.evaluate.environment import (
    NEXT,
    PROMPT_VERSION,
    SUBMIT,
    Environment,
    Reply,
    failed,
    load_environment_prompts,
)
from dptool.evaluate.run_folder import (
    OUTSIDE,
    Claim,
    Ledger,
    RunFolder,
    alive,
    json_line,
    prepare_run_folder,
    process_token,
    shrink_arguments,
    write_atomic,
)

MAX_ANSWER_CHARS = 100_000
HANDLE = "attempt_id"
HTTP_SESSION = "http:"  # the caller of an MCP session over HTTP: http:<its Mcp-Session-Id>


def _when(at: float) -> str:
    return datetime.datetime.fromtimestamp(at, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


class ServedRun:
    """Tasks handed out one attempt at a time per caller (every task for attempt 1, then for attempt 2, ...)."""

    def __init__(self, env: Environment, tasks: list[dict], out: str | Path, *, epochs: int = 1,
                 settings: dict | None = None, prompt_version: str = PROMPT_VERSION,
                 max_environments: int = MAX_ENVIRONMENTS):
        problem = limits_module.out_of_range("epochs", epochs, limits_module.EPOCHS)
        if problem or not isinstance(epochs, int):  # before the run folder is made: nothing written
            raise DptoolError(problem or f"epochs is {epochs!r}: not a whole number")
        self.env = env
        self.out = Path(out)
        self.epochs = epochs
        self.fingerprint = fingerprint(env.bundle)
        self.prompts = load_environment_prompts(prompt_version)
        self.settings = {"bundle": self.fingerprint, "source": "serve", "epochs": epochs,
                         "prompt_version": prompt_version, "condition": "standard",
                         "sql_timeout": env.limits.sql_timeout, "sql_memory_mb": env.limits.sql_memory_mb,
                         "max_rows": env.limits.max_rows, **(settings or {})}
        prepare_run_folder(self.out, self.settings)
        self.folder = RunFolder(self.out)
        self.tasks = {t["task_id"]: t for t in tasks}
        self.order = [(t["task_id"], a) for a in range(1, epochs + 1) for t in tasks]
        self.total = len(self.order)
        self.process = process_token() or "0@0"
        self.caller = f"stdio:{self.process}"  # the caller of a call that names none: this process's one client
        self.pool = EnvironmentPool(env, max_environments)
        self.watch = BundleWatch(env.bundle, self.fingerprint)
        self.stale: str | None = None  # why the server must stop: the bundle changed under it
        self.on_stale: Callable[[str], None] = lambda _: None
        self._stale_lock = threading.Lock()

    def close(self) -> None:
        self.pool.close()

    @property
    def instructions(self) -> str:
        return Template(self.prompts["instructions"]).substitute(
            max_rows=self.env.limits.max_rows, condition=self.prompts["conditions"]["standard"].strip())

    def task_prompt(self, task: dict) -> str:
        """A task as an agent reads it: its question and its answer format."""
        return Template(self.prompts["task"]).substitute(question=task["question"],
                                                         format=format_hint(task, self.prompts))

    # ---------------------------------------------------------------------------------------------
    # a call

    def call(self, tool: str, arguments: dict[str, Any] | None, caller: str | None = None) -> Reply:
        """One call of any tool, the task flow's included: its reply, recorded in the attempt it belongs to."""
        caller = caller or self.caller
        start = time.monotonic()
        stale = self._check_bundle()
        if stale:
            reply = failed(stale)
            self.record(tool, arguments, reply, time.monotonic() - start, caller)
            return reply
        args = arguments if isinstance(arguments, dict) else {}
        handle = args.get(HANDLE)
        if tool in (NEXT, SUBMIT):
            with self.folder.locked() as ledger:
                if tool == NEXT:
                    reply, claim = self._next_task(ledger, caller)
                else:
                    reply, claim = self._submit(ledger, caller, args, start)
                if claim is not None and not ledger.is_answered(claim):
                    self._append(ledger, claim, tool, arguments, reply, time.monotonic() - start)
                elif not (tool == SUBMIT and not reply.error):  # a recorded answer is in its transcript already
                    self._outside(tool, arguments, reply, time.monotonic() - start, claim)
                fresh = tool == NEXT and claim is not None
            if fresh:  # the attempt's SQL worker starts while the agent reads the task
                with self.pool.use(claim.id, self.tasks[claim.task_id].get("domain")):
                    pass
            elif tool == SUBMIT and claim is not None and not reply.error:  # answered: its environment is free
                self.pool.release(claim.id)
            return reply
        with self.folder.locked() as ledger:
            claim = self._resolve(ledger, caller, handle)
            over = isinstance(claim, Claim) and ledger.is_answered(claim)
        if isinstance(claim, Reply):
            reply, claim = claim, None
        else:
            domain = self.tasks[claim.task_id].get("domain") if claim else None
            with self.pool.use(claim.id if claim else None, domain) as env:
                reply = env.call(tool, {k: v for k, v in args.items() if k != HANDLE}
                                 if isinstance(arguments, dict) else arguments)
            if over:  # a call by the handle of an answered attempt: its environment is not kept for it
                self.pool.release(claim.id)
        self._record_in(tool, arguments, reply, time.monotonic() - start, claim)
        return reply

    def record(self, tool: str, arguments: Any, reply: Reply, seconds: float, caller: str | None = None) -> None:
        """Record a call no tool ran (one the MCP layer refused) in the attempt it belongs to."""
        handle = arguments.get(HANDLE) if isinstance(arguments, dict) else None
        with self.folder.locked() as ledger:
            claim = self._resolve(ledger, caller or self.caller, handle)
            claim = None if isinstance(claim, Reply) else claim
            self._record_locked(ledger, tool, arguments, reply, seconds, claim)

    def _record_in(self, tool: str, arguments: Any, reply: Reply, seconds: float, claim: Claim | None) -> None:
        with self.folder.locked() as ledger:
            self._record_locked(ledger, tool, arguments, reply, seconds, claim)

    def _record_locked(self, ledger: Ledger, tool, arguments, reply, seconds, claim: Claim | None) -> None:
        claim = ledger.claims.get(claim.id) if claim else None  # as the folder holds it now
        if claim is not None and not ledger.is_answered(claim):
            self._append(ledger, claim, tool, arguments, reply, seconds)
        else:  # outside every attempt, or made after its attempt was answered
            self._outside(tool, arguments, reply, seconds, claim)

    def _check_bundle(self) -> str | None:
        with self._stale_lock:
            if self.stale is None:
                name = self.watch.changed()
                if name is not None:
                    self.stale = (f"the bundle's {name} changed on disk while this server ran; the server stops: "
                                  "start it again (on a new --out for a new bundle)")
                    self.on_stale(self.stale)
            return self.stale

    @staticmethod
    def _entry(tool: str, arguments: Any, reply: Reply, seconds: float) -> dict:
        entry = {"tool": tool, "arguments": shrink_arguments(arguments), "reply_chars": len(reply.text),
                 "seconds": round(seconds, 3), "error": reply.error, "at": round(time.time(), 3)}
        entry["reply"] = shrink_arguments(reply.text)
        return entry

    def _append(self, ledger: Ledger, claim: Claim, tool, arguments, reply, seconds) -> None:
        self.folder.append(self.folder.call_log(claim), self._entry(tool, arguments, reply, seconds))

    def _outside(self, tool, arguments, reply, seconds, claim: Claim | None) -> None:
        entry = self._entry(tool, arguments, reply, seconds)
        if claim is not None:
            entry[HANDLE] = claim.id
        self.folder.append(self.folder.transcripts / OUTSIDE, entry)

    # ---------------------------------------------------------------------------------------------
    # which attempt a call belongs to

    def _mine(self, claim: Claim) -> bool:
        return claim.task_id in self.tasks

    def _open_of(self, ledger: Ledger, caller: str) -> Claim | None:
        held = [c for c in ledger.open_claims() if c.holder == caller and self._mine(c)]
        return held[-1] if held else None

    def _resolve(self, ledger: Ledger, caller: str, handle: Any) -> Claim | Reply | None:
        """The attempt a call is recorded into (None: outside every attempt), or the error reply of a bad handle."""
        if handle is not None:
            claim = ledger.claims.get(handle) if isinstance(handle, str) else None
            if claim is None or not self._mine(claim):
                return failed(f"no attempt of this run has the attempt_id {str(handle)[:40]!r}; next_task gives one")
            return claim
        mine = self._open_of(ledger, caller)
        if mine is not None or caller.startswith(HTTP_SESSION):
            return mine  # an MCP session is known by its id: another agent's attempt is never its
        every = [c for c in ledger.open_claims() if self._mine(c)]
        return every[0] if len(every) == 1 else None

    # ---------------------------------------------------------------------------------------------
    # the task flow

    def _next_task(self, ledger: Ledger, caller: str) -> tuple[Reply, Claim | None]:
        note = None
        claim = self._open_of(ledger, caller)
        if claim is not None:
            note = "this task is still open: submit its answer with submit_answer before the next one"
        else:
            orphan = next((c for c in ledger.open_claims() if self._mine(c) and not alive(c.process)), None)
            if orphan is not None:  # handed out by a server that is gone, never answered: it goes on here
                ledger.add({"event": "reopen", "id": orphan.id, "holder": caller, "process": self.process,
                            "at": round(time.time(), 3)})
                claim = orphan
                note = "this task was handed out before and is not answered yet: it goes on"
            else:
                free = next(((t, a) for t, a in self.order
                             if (t, a) not in ledger.by_pair and (t, a) not in ledger.answered), None)
                if free is None:
                    return self._nothing_left(ledger), None
                claim = Claim(secrets.token_hex(5), free[0], free[1], caller, self.process, round(time.time(), 3))
                ledger.add({"event": "claim", "id": claim.id, "task_id": claim.task_id, "attempt": claim.attempt,
                            "holder": caller, "process": self.process, "at": claim.at})
                claim = ledger.claims[claim.id]
        task = self.tasks[claim.task_id]
        handed = {"task_id": task["task_id"], "attempt": claim.attempt, "epochs": self.epochs, HANDLE: claim.id,
                  "question": task["question"], "answer_format": format_hint(task, self.prompts),
                  "remaining": self._left(ledger)}
        if note:
            handed["note"] = note
        return Reply(json.dumps(handed, indent=2, ensure_ascii=False)), claim

    def _left(self, ledger: Ledger) -> int:
        """Attempts of this server's tasks not answered yet."""
        done = {(c.task_id, c.attempt) for c in ledger.claims.values() if ledger.is_answered(c)} | ledger.answered
        return sum(1 for pair in self.order if pair not in done)

    def _nothing_left(self, ledger: Ledger) -> Reply:
        left = self._left(ledger)
        if not left:
            return Reply(json.dumps({"done": True, "message": f"every task of this run is answered ({self.total} "
                                                              "attempts); there is nothing more to do"}))
        return Reply(json.dumps({"done": False, "message": f"no task is free: the {left} not answered yet "
                                                           f"{'is' if left == 1 else 'are'} handed out to other "
                                                           "agents; call next_task again later"}))

    def _submit(self, ledger: Ledger, caller: str, arguments: dict, start: float) -> tuple[Reply, Claim | None]:
        task_id, handle = arguments.get("task_id"), arguments.get(HANDLE)
        if handle is not None:
            claim = self._resolve(ledger, caller, handle)
            if isinstance(claim, Reply):
                return claim, None
        else:
            claim = self._open_of(ledger, caller)
            if claim is not None and claim.task_id != task_id:
                return failed(f"task_id {str(task_id)[:80]!r} is not the open task ({claim.task_id}); submit the "
                              "answer to the task next_task gave"), claim
            if claim is None:
                of_task = [c for c in ledger.claims.values() if c.task_id == task_id and self._mine(c)]
                still = [c for c in of_task if not ledger.is_answered(c)]
                if len(still) > 1:
                    return failed(f"{len(still)} attempts of {task_id} are open: pass the attempt_id next_task "
                                  "gave"), None
                claim = still[0] if still else (of_task[-1] if of_task else None)
            if claim is None:
                if not ledger.open_claims():
                    return failed("no task is open; call next_task to get one"), None
                return failed(f"task_id {str(task_id)[:80]!r} is not an open task; submit the answer to the task "
                              "next_task gave"), None
        if ledger.is_answered(claim):
            when = f" at {_when(claim.answered_at)}" if claim.answered_at is not None else ""
            return failed(f"the answer to {claim.task_id} (attempt {claim.attempt}) was already recorded{when} "
                          f"(attempt_id {claim.id}); this one is not recorded"), claim
        if task_id != claim.task_id:
            return failed(f"task_id {str(task_id)[:80]!r} is not the task of attempt_id {claim.id} "
                          f"({claim.task_id})"), claim
        if "answer" not in arguments:
            return failed("submit_answer needs the argument 'answer'"), claim
        answer = arguments["answer"]
        if holds_non_finite(answer):  # the MCP SDK reads a bare NaN; answers.jsonl would then not be JSON
            return failed("the answer holds NaN or Infinity, which JSON cannot carry: give a number, or null"), claim
        size = len(answer) if isinstance(answer, str) else len(json.dumps(answer, ensure_ascii=False))
        if size > MAX_ANSWER_CHARS:
            return failed(f"the answer is {size:,} characters, at most {MAX_ANSWER_CHARS:,}"), claim
        left = self._left(ledger) - 1
        reply = Reply(f"recorded the answer to {claim.task_id} (attempt {claim.attempt} of {self.epochs}); "
                      + (f"{left} to go: call next_task" if left else "that was the last: the run is complete"))
        self._finish(ledger, claim, answer, arguments, reply, time.monotonic() - start)
        return reply, claim

    def _finish(self, ledger: Ledger, claim: Claim, answer: Any, arguments: dict, reply: Reply,
                seconds: float) -> None:
        """The attempt's transcript, written once and whole, then its answer line, then the ledger's word."""
        self._append(ledger, claim, SUBMIT, arguments, reply, seconds)
        calls = self.folder.calls(claim)
        work = [c for c in calls if c.get("tool") not in (NEXT, SUBMIT)]
        now = time.time()
        transcript = {"task_id": claim.task_id, "attempt": claim.attempt, HANDLE: claim.id,
                      "bundle": self.fingerprint, "source": "serve",
                      "prompt": self.task_prompt(self.tasks[claim.task_id]), "answer": answer, "finished": True,
                      "started_at": claim.at, "seconds": round(now - claim.at, 3), "tool_calls": len(work),
                      "sql_errors": sum(1 for c in work if c.get("tool") == "execute_sql" and c.get("error")),
                      "calls": calls}
        name = f"{claim.name}.json"
        write_atomic(self.folder.transcripts / name, json.dumps(transcript, indent=2, sort_keys=True) + "\n")
        line = {"task_id": claim.task_id, "attempt": claim.attempt, "bundle": self.fingerprint, "answer": answer,
                "transcript": f"transcripts/{name}", "stop": "answer", "seconds": transcript["seconds"],
                "tool_calls": transcript["tool_calls"], "sql_errors": transcript["sql_errors"]}
        with open(self.folder.answers, "a+b") as f:
            f.seek(0, 2)
            if f.tell():
                f.seek(-1, 2)
                if f.read(1) != b"\n":  # a line cut by a kill: start a fresh one
                    f.write(b"\n")
            f.write(json_line(line).encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        ledger.add({"event": "answer", "id": claim.id, "at": round(now, 3)})

    def progress(self) -> str:
        """One line for the person who started the server."""
        with self.folder.locked() as ledger:
            left = self._left(ledger)
        return f"{self.total - left} of {self.total} attempts answered, {left} to go"
