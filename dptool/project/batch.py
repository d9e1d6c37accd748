"""Many model texts compiled by dbt at once: the SQL dbt writes for each, without a dbt node per text.

dbt's cost per model (parsing it, a rendering context, injecting the ephemeral models it reads as CTEs
with sqlparse, its events and compiled file) is several times what rendering one `dptool.gold` call
costs. So dptool hands dbt its gold models and probes in batches: one ephemeral model holds a few dozen
model texts and one `dbt compile` renders them all. What dbt writes for a model holding one text alone
is then cut back out of its batch: the ephemeral models the text reads, injected as CTEs in front of the
text's own SQL, in dbt's format and order.

In a batch, each text sits in a block comment: dbt injects the CTEs after the batch's first WITH, which
sqlparse finds without taking the texts apart (three quarters of dbt's compile time otherwise). A text
whose SQL closes the comment and then ends the statement (a `*/` and a `;` in one of its literals) would
lose what follows: such a batch is compiled again with each text in a CTE of its own, which sqlparse
reads as SQL.
"""

from __future__ import annotations

import re
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dptool.errors import DptoolError
from dptool.project.dbt import DbtProject, NodeFailed
from dptool.sql import SharedQuery

BATCH_DIR = Path("models") / "dptool_batch"
BATCH_TAG = "dptool_batch"
BATCH_SIZE = 25  # texts per batch model: dbt's cost per node is shared, sqlparse's input stays small
CTE_PREFIX = "__dbt__cte__"  # dbt's name of an ephemeral model injected as a CTE (BaseRelation.add_ephemeral_prefix)
# a batch model is ephemeral: left behind by a killed run, it builds nothing in the user's `dbt build`
CONFIG = "{{ config(materialized='ephemeral', tags=['" + BATCH_TAG + "'], contract={'enforced': false}) }}\n"
_LEADING_WITH = re.compile(r"\A(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?\*/)*with(?:\s+recursive)?\b", re.IGNORECASE | re.DOTALL)
_INJECTED = re.compile(r"(?:\A\s*|\n\),\s*)(" + CTE_PREFIX + r"\w+) as \(\n")


class _Lost(Exception):
    """A batch's compiled SQL lost a text's markers."""


@dataclass(frozen=True)
class Compiled:
    """What dbt wrote for one text: its SQL, or the message of the error that stopped it.

    `sql` is `own_sql` (the text rendered) with `injected` in front: the (name, SQL) of each ephemeral
    model it reads, in dbt's order (None when dbt's SQL was not in the form this module reads).
    """

    sql: str | None = None
    error: str | None = None
    own_sql: str | None = None
    injected: tuple[tuple[str, str], ...] | None = None

    @property
    def query(self) -> SharedQuery:
        """`sql`, with the ephemeral models it reads as the CTEs other texts of the compile may share."""
        if self.injected is None:
            return SharedQuery.plain(self.sql)
        own = self.own_sql
        return SharedQuery(self.injected, lambda injected: _inject(own, injected))


def compile_texts(project: DbtProject, texts: dict[str, str], on_batch_done: Callable[[int], None] | None = None,
                  ) -> dict[str, Compiled]:
    """Compile model texts (the content of a .sql model file each, keyed by a name) in one `dbt compile`.

    The texts go into batch models of BATCH_SIZE, in the order given (put texts that read the same models
    together: a batch injects the CTEs of all of them). A text that fails to compile fails its batch and
    stops dbt; that batch is then compiled text by text, so that only the failing texts get an error.
    `on_batch_done(n)` is called as a batch of n texts finishes. The batch models are removed afterwards.
    """
    if not texts:
        return {}
    folder = project.project_dir / BATCH_DIR
    nonce = uuid.uuid4().hex[:12]  # markers no value in a text can spell
    names = list(texts)
    pending = [(names[i:i + BATCH_SIZE], False) for i in range(0, len(names), BATCH_SIZE)]
    out: dict[str, Compiled] = {}

    def cut(batch: str, names: list[str], plain: bool, compiled: str) -> None:
        try:
            out.update(zip(names, _cut(compiled, len(names), nonce, plain), strict=True))
        except _Lost:
            if plain:
                raise DptoolError(f"dbt's compiled SQL of {BATCH_DIR / batch}.sql lost a text's markers") from None
            pending.append((names, True))
            return
        if on_batch_done:
            on_batch_done(len(names))

    try:
        while pending:
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            batches = {}
            for names, plain in pending:
                # a batch's name follows from its texts: unchanged batches are not parsed again by a retry
                batch = f"batch_{names[0]}" if len(names) == 1 else f"batch_{names[0]}__{names[-1]}"
                batch = re.sub(r"\W", "_", batch) + ("_plain" if plain else "")
                batches[batch] = (names, plain)
                (folder / f"{batch}.sql").write_text(_batch_text([texts[n] for n in names], nonce, plain),
                                                     encoding="utf-8")
            pending = []
            try:
                results = project.run("compile", "--select", f"tag:{BATCH_TAG}", "--no-populate-cache",
                                      "--no-write-json")
            except NodeFailed as exc:
                # dbt stops at the first failing node: what it compiled before is read from target/compiled/
                failed = {uid.rsplit(".", 1)[-1]: m for uid, m in exc.failed.items()}
                for message in failed.values():
                    refuse_broken_rule(message)
                succeeded = {uid.rsplit(".", 1)[-1]: uid.split(".")[1] for uid in exc.succeeded}
                if not failed.keys() & batches.keys():
                    raise
                for batch, (names, plain) in batches.items():
                    path = (BATCH_DIR / f"{batch}.sql").as_posix()
                    if batch in succeeded:
                        written = project.target_dir / "compiled" / succeeded[batch] / path
                        cut(batch, names, plain, written.read_text(encoding="utf-8"))
                    elif batch not in failed:
                        pending.append((names, plain))  # not compiled yet: in the next attempt
                    elif len(names) == 1:  # dbt names the batch model: the message names the text
                        message = " ".join(failed[batch].replace(f"{batch} ({path})", names[0]).split())
                        out[names[0]] = Compiled(error=message)
                        if on_batch_done:
                            on_batch_done(1)
                    else:
                        pending += [([n], plain) for n in names]  # which of its texts fails
                continue
            by_name = {r.name: r for r in results}
            for batch, (names, plain) in batches.items():
                result = by_name.get(batch)
                if result is None or result.status != "success" or not result.compiled_code:
                    reason = (result.message or result.status) if result is not None else "not compiled"
                    refuse_broken_rule(reason)
                    out.update({n: Compiled(error=" ".join(reason.split())) for n in names})
                    if on_batch_done:
                        on_batch_done(len(names))
                else:
                    cut(batch, names, plain, result.compiled_code)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {n: out[n] for n in texts}


# what dptool.build_metric_spec raises for a rule macro that returns something other than the spec
_BROKEN_RULE = re.compile(r"dptool: (rule macro 'rule__\w+' returned .*?\{\{ return\(q\) \}\})", re.DOTALL)


def refuse_broken_rule(message: str) -> None:
    """A rule macro that returns something other than the query spec is the project's error, not a task's: every
    text using it fails alike, so the run stops on it, in one line naming the macro."""
    found = _BROKEN_RULE.search(message or "")
    if found:
        raise DptoolError(" ".join(found.group(1).split()))


def _batch_text(texts: list[str], nonce: str, plain: bool) -> str:
    if plain:  # each text in a CTE: sqlparse reads it as SQL
        # a text ending in a line comment would swallow the closing parenthesis
        parts = [f"/* {nonce}:{i} */ dptool_text_{i} as (\n{text.rstrip()}\n)," for i, text in enumerate(texts)]
    else:  # each text in a block comment: one token to sqlparse
        parts = [f"/*{nonce}:{i}\n{text.rstrip()}\n{nonce}:{i}*/" for i, text in enumerate(texts)]
    # the config comes last: a text's own config() (a gold model's materialized='table') must not win
    return ("with\n" + "\n".join(parts) + f"\n/* {nonce}:end */ dptool_batch as (select 1 as dptool_batch)\n"
            "select * from dptool_batch\n" + CONFIG)


def _cut(compiled: str, count: int, nonce: str, plain: bool) -> list[Compiled]:
    """The SQL of each text of a compiled batch, with the injected CTEs it reads (see module docstring)."""
    if plain:
        opening, closing = [f"/* {nonce}:{i} */ dptool_text_{i} as (\n" for i in range(count)], "\n),\n"
        ends = [f"/* {nonce}:{i + 1} */" for i in range(count - 1)] + [f"/* {nonce}:end */"]
    else:
        opening = [f"/*{nonce}:{i}\n" for i in range(count)]
        ends = [f"\n{nonce}:{i}*/" for i in range(count)]
        closing = ""
    texts, at = [], 0
    for i in range(count):
        begin = compiled.find(opening[i], at)
        end = compiled.find(ends[i], begin + len(opening[i])) if begin >= 0 else -1
        if end < 0:
            raise _Lost()
        own = compiled[begin + len(opening[i]):end]
        if plain:
            if not own.endswith(closing):
                raise _Lost()
            own = own[:-len(closing)]
        texts.append(own)
        at = end
    head = compiled[:compiled.find(opening[0])]
    start = _LEADING_WITH.match(head)
    if start is None:
        raise DptoolError(f"dbt's compiled SQL of a {BATCH_TAG} model does not start with its WITH")
    ctes = _injected(head[start.end():])
    out = []
    for own in texts:
        needed = _needed(own, ctes)
        out.append(Compiled(_inject(own, needed), own_sql=own, injected=None if isinstance(needed, str) else needed))
    return out


def _injected(section: str) -> list[tuple[str, str]] | str:
    """The (name, SQL) of each CTE dbt injected, in its order; the section as it is if it is not in dbt's form."""
    starts = list(_INJECTED.finditer(section))
    if not starts:
        return section if section.strip() else []
    ctes = []
    for here, following in zip(starts, [*starts[1:], None], strict=True):
        if following is not None:
            end = following.start()
        else:
            tail = section.rstrip().removesuffix(",").rstrip()
            end = len(tail) - 2 if tail.endswith("\n)") else -1
        if end < here.end():
            return section
        ctes.append((here.group(1), section[here.end():end]))
    # what dbt wrote, if this reading is right: `with` + ", ".join(" <name> as (\n<sql>\n)") + ", "
    if ", ".join(f" {n} as (\n{sql}\n)" for n, sql in ctes) not in section:
        return section
    return ctes


def _needed(sql: str, ctes: list[tuple[str, str]] | str) -> tuple[tuple[str, str], ...] | str:
    """The injected CTEs `sql` reads, and those they read, in the order dbt injects them for `sql` alone (all of
    them when not in dbt's form).

    dbt prepends a model's ephemeral models in the order it refs them, each one's own ephemeral models first
    (compilation's _recursively_prepend_ctes). A batch's order is that of all its texts, so it is not taken:
    the order is rebuilt from where each name first appears in `sql` and in the bodies, as dbt would for `sql`
    alone, whatever else shares its batch.
    """
    if isinstance(ctes, str):
        return ctes
    bodies = dict(ctes)
    order: list[str] = []
    seen: set[str] = set()  # before its dependencies are done: a cycle cannot recurse forever

    def visit(name: str) -> None:
        if name in seen or name not in bodies:
            return
        seen.add(name)
        for dependency in dict.fromkeys(re.findall(CTE_PREFIX + r"\w+", bodies[name])):
            visit(dependency)
        order.append(name)

    for name in dict.fromkeys(re.findall(CTE_PREFIX + r"\w+", sql)):
        visit(name)
    return tuple((n, bodies[n]) for n in order)


def _inject(sql: str, ctes: tuple[tuple[str, str], ...] | str) -> str:
    """`sql` with `ctes` in front, as dbt's inject_ctes_into_sql writes them."""
    injected = ctes.rstrip().removesuffix(",") if isinstance(ctes, str) else \
        ", ".join(f" {n} as (\n{body}\n)" for n, body in ctes)
    if not injected.strip():
        return sql
    start = _LEADING_WITH.match(sql)
    if start is None:
        return f"with{injected} {sql}"
    rest = sql[start.end():]
    space = rest[:len(rest) - len(rest.lstrip())]
    return f"{sql[:start.end()]}{space}{injected}, {rest.lstrip()}"
