"""dbt properties files written by dptool: stable bytes, the project's YAML style, the header comment kept."""

from __future__ import annotations

import os
from pathlib import Path

import yaml


class _Dumper(yaml.SafeDumper):
    """Block style, lists indented under their key (as the project's hand-written YAML)."""

    def increase_indent(self, flow: bool = False, indentless: bool = False):
        return super().increase_indent(flow, False)


class Flow(dict):
    """A mapping written on one line: `{source: orders.order_id, type: pass-through}`."""


def _text(dumper: yaml.SafeDumper, value: str):
    # Multi-line text (provenance SQL, markdown) as a literal block, long text folded: readable and diff-friendly.
    style = "|" if "\n" in value else ">" if len(value) > 100 else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _flow(dumper: yaml.SafeDumper, value: Flow):
    return dumper.represent_mapping("tag:yaml.org,2002:map", dict(value), flow_style=True)


_Dumper.add_representer(str, _text)
_Dumper.add_representer(Flow, _flow)


def header(text: str) -> str:
    """The comment lines at the top of a YAML file (they are all PyYAML cannot keep)."""
    lines = []
    for line in text.splitlines():
        if line.startswith("#") or (not line.strip() and lines):
            lines.append(line)
        else:
            break
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


def dumps(data: dict, comment: str = "") -> str:
    body = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=110, default_flow_style=False)
    return (comment + "\n" if comment else "") + body


def write(path: Path, data: dict, comment: str = "") -> bool:
    """Write the file when its text changes (atomically); True when it did."""
    text = dumps(data, comment)
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return True
