"""The checksum of each file dbt last parsed, from its partial-parse state (target/partial_parse.msgpack).

manifest.json carries a checksum for models, seeds and tests only; dbt's partial-parse state carries one for every
file it read (YAML properties, macros, docs blocks included): sha256 of the file's text, stripped. dbt writes it
at the end of every parse that was not skipped, before manifest.json; a later command that skips the parse (nothing
changed) leaves it as it is. It is trusted for a manifest only when it is not newer than manifest.json and agrees
with every checksum manifest.json has (else it is another parse's, and the caller falls back on times).
"""

from __future__ import annotations

from pathlib import Path

STATE = "partial_parse.msgpack"


def parsed_checksums(manifest_path: Path, manifest: dict, project: str) -> dict[str, str]:
    """Path relative to the project root -> sha256 dbt took of its text, for the project's own files; {} when the
    state is missing, unreadable or not the parse `manifest` comes from."""
    state_path = manifest_path.parent / STATE
    try:
        import msgpack  # dbt's own dependency (mashumaro[msgpack])

        if manifest_path.is_file() and state_path.stat().st_mtime > manifest_path.stat().st_mtime:
            return {}
        state = msgpack.unpackb(state_path.read_bytes(), raw=False, strict_map_key=False)
        files = state.get("files") or {}
        out = {}
        for entry in files.values():
            path, checksum = entry.get("path") or {}, entry.get("checksum") or {}
            if entry.get("project_name") != project or checksum.get("name") != "sha256":
                continue
            rel = Path(str(path.get("searched_path") or ""), str(path.get("relative_path") or "")).as_posix()
            out[rel] = str(checksum.get("checksum"))
    except Exception:  # noqa: BLE001 - no state, or one of a dbt that writes it otherwise: times decide
        return {}
    for node in (manifest.get("nodes") or {}).values():
        checksum = node.get("checksum") or {}
        rel = str(node.get("original_file_path") or "").replace("\\", "/")
        if node.get("package_name") == project and checksum.get("name") == "sha256" and not node.get("test_metadata") \
                and rel in out and out[rel] != checksum.get("checksum"):
            return {}
    return out
