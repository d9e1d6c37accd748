"""The minimum support a project sets: the dbt var `dptool_min_support` ({rows, entities, events, entity}).

The support queries read the var through dbt (the macro `dptool.support`); candidate building reads the same var
from dbt_project.yml before any query runs, so that the windows, slices and groups it draws (a trend's months, a
ranking's or breakdown's groups, a test's two groups) are those that can rest on the minimum in force, and the
questions say that minimum. Every key is optional:

- `rows`: rows each group an answer reads rests on, at least (30): those the metric's value reads after its own
  filters and the policies (`avg(x)`: the rows where x is not NULL; a ratio: those its denominator reads);
- `entities`: distinct entities among them, at least (10);
- `events`: a rate's (a percent metric's) numerator events among them, at least (10): the rows its numerator
  counts (a late delivery, a defaulted loan);
- `entity`: the column those entities are counted on (a column name, or a list tried in order); by default the
  metric's declared entity (a semantic model's primary entity, `meta.dptool.metric.entity`), else the column a
  `count(distinct x)` metric counts (a per-seller ratio's denominator counts sellers), else the `_id` column most
  of the domain's metric models carry.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dptool.errors import DptoolError
from dptool.project.nouns import noun  # noqa: F401 - the support's nouns, said here too

MIN_ROWS = 30  # rows each group of an answer rests on, at least (the dbt var dptool_min_support overrides)
MIN_ENTITIES = 10  # distinct entities (accounts, orders) each group rests on, at least
MIN_EVENTS = 10  # a rate's numerator events (defaults, late deliveries) each group rests on, at least
VAR = "dptool_min_support"
KEYS = ("rows", "entities", "events", "entity")
SUPPORT_MARGIN = 1.5  # rows a window should hold over the minimum: rules exclude some, groups are uneven


@dataclass(frozen=True)
class Setting:
    """The minimum support in force, as the support queries read it (the dbt var over dptool's defaults)."""

    rows: int = MIN_ROWS
    entities: int = MIN_ENTITIES
    entity: tuple[tuple[str, str], ...] = ()  # (domain, entity column) as counted
    chosen: tuple[str, ...] = ()  # the var's `entity`, when set
    events: int = MIN_EVENTS

    def sentence(self, domain: str | None = None) -> str:
        """The setting as card.md (every domain) and a domain's kb state it."""
        counted = "; ".join(f"{noun(c)}" + ("" if domain else f" in {d}") + f", `{c}`" for d, c in self.entity
                            if domain is None or d == domain) or "rows"
        return (f"every group an answer reads (a slice, each compared or listed group, each group a ranking chooses "
                f"its top ones among, each month of a trend, each metric a composite is computed from) rests on at "
                f"least {self.rows} rows and {self.entities} "
                f"distinct entities after the policies in force (entities: {counted}; for a metric that counts "
                f"distinct values of a column, as a per-entity ratio's denominator does, those values), and a rate "
                f"on at least {self.events} events of its numerator (the rows its numerator counts); the rows "
                f"counted are those the metric's value reads (an average: the rows where its measure is not blank; "
                f"a ratio: those its denominator reads); a question resting on fewer, or on groups at most one of "
                f"which has rows the value reads, is not asked (dbt var `{VAR}`: {self.var_text()})")

    def var_text(self) -> str:
        """The setting as the dbt var writes it, `entity` included when set."""
        entity = ""
        if self.chosen:
            entity = ", entity: " + (self.chosen[0] if len(self.chosen) == 1 else f"[{', '.join(self.chosen)}]")
        return f"{{rows: {self.rows}, entities: {self.entities}, events: {self.events}{entity}}}"


def read_setting(project_dir: str | Path, project_name: str | None = None) -> Setting:
    """The var as dbt_project.yml sets it (global `vars:`, or scoped to the project or to the dptool package, which
    wins as dbt's own resolution does), over the defaults; a malformed value is one error naming the key."""
    from dptool.project.dbt import _project_yml

    data = _project_yml(Path(project_dir))
    variables = data.get("vars") if isinstance(data.get("vars"), dict) else {}
    value = variables.get(VAR)
    for scope in (project_name or data.get("name"), "dptool"):
        scoped = variables.get(scope) if scope else None
        if isinstance(scoped, dict) and VAR in scoped:
            value = scoped[VAR]
    where = f"{Path(project_dir) / 'dbt_project.yml'}: vars.{VAR}"
    if value is None:
        return Setting()
    if not isinstance(value, dict):
        raise DptoolError(f"{where} must be a mapping with any of {', '.join(KEYS)} (e.g. {{rows: 10, entities: 5}})")
    unknown = sorted(set(value) - set(KEYS))
    if unknown:
        raise DptoolError(f"{where}.{unknown[0]} is not a key of the minimum support ({', '.join(KEYS)})")
    numbers = {}
    for key, default in (("rows", MIN_ROWS), ("entities", MIN_ENTITIES), ("events", MIN_EVENTS)):
        n = value.get(key, default)
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise DptoolError(f"{where}.{key} is {n!r}; expected a whole number of at least 1")
        numbers[key] = n
    entity = value.get("entity") or ()
    entity = (entity,) if isinstance(entity, str) else entity
    if not isinstance(entity, (list, tuple)) or not all(isinstance(e, str) and e for e in entity):
        raise DptoolError(f"{where}.entity is {value.get('entity')!r}; expected a column name or a list of them")
    return Setting(numbers["rows"], numbers["entities"], chosen=tuple(entity), events=numbers["events"])
