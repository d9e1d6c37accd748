"""The row-level columns a rule macro sets to a constant: `q.columns.update({'type': "'classic'"})`.

A rule that redefines a column to one value makes every slice on that column hold all rows or none (a slice
filters the column as the rules redefine it), and every breakdown by it one group. Read from the macro's text:
a key and a value written as plain string literals, the value SQL that reads no column. A value built in Jinja
(`'case when ' ~ prev ~ ' ...'`) or a key held in a variable is not read: such a rule is taken to keep the column
a column.
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp

_UPDATE = re.compile(r"\bq\.columns\.update\(\s*\{(?P<body>.*?)\}\s*\)", re.S)
_PAIR = re.compile(r"""(?P<q>['"])(?P<key>[^'"]+)(?P=q)\s*:\s*(?:'(?P<a>[^'\\]*)'|"(?P<b>[^"\\]*)")\s*(?=[,}]|$)""")


def constant_columns(macro_sql: str) -> tuple[str, ...]:
    """The columns a rule macro sets to SQL that reads no column (a literal, NULL), sorted."""
    found = set()
    for update in _UPDATE.finditer(macro_sql or ""):
        for pair in _PAIR.finditer(update.group("body")):
            value = pair.group("a") if pair.group("a") is not None else pair.group("b")
            if _constant(value):
                found.add(pair.group("key"))
    return tuple(sorted(found))


def _constant(sql: str) -> bool:
    try:
        tree = sqlglot.parse_one(sql)
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError, ValueError):
        return False
    return tree is not None and not any(isinstance(n, exp.Column | exp.Select | exp.Anonymous | exp.Rand)
                                        for n in tree.walk())
