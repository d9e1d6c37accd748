"""File names made from data (a task id, a sample id, a group): each stays inside its folder.

A name that is already a plain file name (lowercase ASCII letters, digits, `.`, `_`, `-`; starting with a letter or
digit; at most MAX_STEM characters) is kept as it is, so the names of dptool's own task ids do not change. Any other
name keeps its plain characters, shortened, and gains `~` and a digest of the whole name: no separator, no `..`, no
absolute path, a bounded length, and two different names never share a file (case-insensitive file systems
included, hence lowercase only). The file name is not reversible by itself: where the original is needed, it is
recorded beside the name (answers.jsonl's `task_id` beside its `transcript`).
"""

from __future__ import annotations

import hashlib
import re

MAX_STEM = 100  # characters of a name, the digest included: room for a suffix within any file system's 255 bytes
DIGEST = 16  # hex characters of sha256 kept
_PLAIN = re.compile(r"[a-z0-9][a-z0-9._-]*")
_UNSAFE = re.compile(r"[^a-z0-9._-]+")


def file_name(name: str) -> str:
    """`name` as one file name that stays in its folder (see the module docstring); the same name, the same file."""
    name = str(name)
    if _PLAIN.fullmatch(name) and ".." not in name and len(name) <= MAX_STEM:
        return name
    # surrogatepass: a lone surrogate (from JSON's \ud800) still has a digest, and a distinct one
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST]
    plain = _UNSAFE.sub("_", name.lower()).replace("..", "_").strip("._-")
    return f"{plain[:MAX_STEM - DIGEST - 1]}~{digest}" if plain else digest


def transcript_name(task_id: str, attempt: int) -> str:
    """The transcript file of one attempt of a task, in a run folder's transcripts/."""
    return f"{file_name(task_id)}-{int(attempt)}.json"
