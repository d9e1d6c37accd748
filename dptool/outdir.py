"""The one rule for everything a command writes: dptool never overwrites a file or folder it did not write, and
writes inside a folder it writes whole (a bundle, link suggestions, a data product) only when it writes that folder.

What dptool wrote is recorded where it wrote it: a marker file (`.dptool`, JSON) in the folder holds the sha256 of
every file dptool put there, at any depth, and for a folder written whole its kind. A file may be replaced only
if the marker beside it records it with its present content; a folder written whole may be replaced only if every
entry in it, at any depth, is one the marker records, unchanged (for folders written before the marker recorded
files: one of the names dptool writes into that kind of folder, with dptool's signature). Anything else is
refused in one line naming the path given, before any work, and so is a destination dptool could not write to.

Files are written to a temporary name beside them and renamed into place; a folder written whole is staged
beside its destination and renamed. A failed run leaves what was there as it was, and nothing half-written. What
is written gets the modes the user's umask gives a new file or folder (tempfile makes them private), and text is
written as UTF-8 with what UTF-8 cannot hold (a lone surrogate) as its backslash escape.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import json
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from glob import escape as glob_escape
from pathlib import Path

from dptool import __version__
from dptool.errors import DptoolError

MARKER = ".dptool"
VOLATILE = "(recorded by name)"  # in place of a hash: see Kind.volatile
_TEMP = (".*.tmp", ".*.tmp-*")  # dptool's own temporary files, left by a run killed outright


@dataclass(frozen=True)
class Kind:
    """A kind of folder dptool writes: its name, the paths it may hold, how an old one looks."""

    name: str  # in the marker and in messages: "benchmark bundle"
    names: tuple[str, ...]  # path patterns (a glob per part) of what dptool writes, for a folder from before hashes
    legacy: Callable[[Path], bool] = lambda _: False  # a folder written before the marker existed
    signed: Callable[[Path, str], bool] = lambda _p, _r: True  # a file of an old folder bears dptool's signature
    sealed: bool = True  # written whole: nothing but its own writer writes inside it
    grows: tuple[str, ...] = ()  # path patterns of files dptool adds to as it goes (not hashed: an eval's answers)
    # path patterns of files recorded by name, not hashed: DuckDB does not write a database byte for byte the same, and
    # the marker is part of a bundle that must be (same seed, same data, same manifest: byte-identical)
    volatile: tuple[str, ...] = ()


def _starts_with(path: Path, text: str) -> bool:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(len(text)) == text
    except (OSError, UnicodeDecodeError):
        return False


def _holds_in_head(path: Path, text: str, chars: int = 400) -> bool:
    try:
        with open(path, encoding="utf-8") as f:
            return text in f.read(chars)
    except (OSError, UnicodeDecodeError):
        return False


def _data_product_signed(path: Path, rel: str) -> bool:
    if rel.endswith(".sql"):
        return _holds_in_head(path, "written by dptool")
    if rel.endswith(".yml"):
        return _starts_with(path, "# written by dptool")
    return True


BUNDLE = Kind("benchmark bundle",
              ("tasks.jsonl", "bundle.json", "warehouse.duckdb", "warehouse.duckdb.wal", "graph.json", "card.md",
               "judge.jsonl", "refresh.md", "refresh.json", "ablation.json", "kb", "kb/metrics.md", "kb/rules",
               "kb/rules/*.md", "kb/*", "kb/*/metrics.md", "kb/*/rules", "kb/*/rules/*.md"),
              lambda p: (p / "tasks.jsonl").is_file() and _starts_with(p / "card.md", "# Benchmark card"),
              lambda p, rel: not rel.startswith("kb/") or _starts_with(p, "# "),
              volatile=("warehouse.duckdb", "warehouse.duckdb.wal"))
LINK = Kind("rule-link report", ("*.sql", "report.json", "report.md"),
            lambda p: _starts_with(p / "report.md", "# ") and (p / "report.json").is_file(),
            lambda p, rel: not rel.endswith(".sql") or _holds_in_head(p, "dptool link"))
DATA_PRODUCT = Kind("data product folder", ("*.sql", "_*.yml", "*.dp.json"),
                    lambda p: any(p.glob("*.dp.json")), _data_product_signed)
RUN = Kind("run folder", ("run.json", "answers.jsonl", "transcripts", "transcripts/*.json", "transcripts/*.jsonl",
                               "score.json", "score.md", "report.html", "dptool.lock"),
           lambda p: (p / "run.json").is_file(), sealed=False,
           grows=("run.json", "answers.jsonl", "transcripts", "transcripts/*.json", "transcripts/*.jsonl",
                  "dptool.lock"))
KINDS = (BUNDLE, LINK, DATA_PRODUCT, RUN)


# ---- modes and text -----------------------------------------------------------------------------------------------

def _umask_now() -> int | None:
    # /proc says it without setting it: os.umask can only be read by changing it, a race with other threads
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return None


def _umask_at_import() -> int:
    mask = _umask_now()
    if mask is None:  # no /proc: read once, while dptool is imported (no thread of its own runs yet)
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


_UMASK = _umask_at_import()


def umask() -> int:
    """The process's umask, read without changing it where /proc allows (else as it was when dptool started)."""
    mask = _umask_now()
    return _UMASK if mask is None else mask


def file_mode() -> int:
    """The mode a new file gets from open(): 0o666 less the umask."""
    return 0o666 & ~umask()


def folder_mode() -> int:
    """The mode a new folder gets from mkdir(): 0o777 less the umask."""
    return 0o777 & ~umask()


def encoded(text: str) -> bytes:
    """`text` as UTF-8; a lone surrogate (from an answer's JSON escape, a file name's undecodable byte) as its
    backslash escape, which inside a JSON string is the same text to a reader."""
    return text.encode("utf-8", "backslashreplace")


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write a file of one's own (a run's settings, a transcript) whole or not at all: a temporary file of this
    writer's own beside it (two writers never clash), then a rename. Its mode is the umask's, as open() gives."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb") as f:
            f.write(encoded(text))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# ---- the marker ---------------------------------------------------------------------------------------------------

def _read_marker(folder: Path) -> dict | None:
    try:
        data = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _marker_kind(folder: Path) -> str | None:
    marker = _read_marker(folder)
    return marker.get("kind") if marker else None


def _recorded(marker: dict | None) -> dict[str, list[str]] | None:
    """rel path -> the sha256s its content may have; None when the marker records no files (an old one)."""
    files = (marker or {}).get("files")
    if not isinstance(files, dict):
        return None
    return {str(k): [v] if isinstance(v, str) else [h for h in v if isinstance(h, str)]
            for k, v in files.items() if isinstance(v, str | list)}


def _write_marker(folder: Path, marker: dict) -> None:
    tmp = folder / f".{MARKER}.tmp-{os.getpid()}"
    tmp.write_text(json.dumps(marker, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    tmp.replace(folder / MARKER)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _matches(rel: str, patterns: tuple[str, ...]) -> bool:
    """Whether `rel` (a/b/c) matches a pattern part by part (`*` never crosses a `/`)."""
    parts = rel.split("/")
    for pattern in patterns:
        wanted = pattern.split("/")
        if len(wanted) == len(parts) and all(fnmatch.fnmatchcase(p, w) for p, w in zip(parts, wanted, strict=True)):
            return True
    return False


def _shown(items: list[str]) -> str:
    return ", ".join(items[:5]) + (f" and {len(items) - 5} more" if len(items) > 5 else "")


# ---- folders written whole ------------------------------------------------------------------------------------------

def _foreign(folder: Path, kind: Kind, marker: dict | None) -> list[str]:
    """Every entry under `folder`, at any depth, that dptool did not write (or that changed since it did)."""
    recorded = _recorded(marker)
    kept_dirs: set[str] = set()
    if recorded is not None:
        for rel in recorded:
            parts = rel.split("/")
            kept_dirs.update("/".join(parts[:i]) for i in range(1, len(parts)))
        kept_dirs.update(str(d) for d in (marker or {}).get("folders") or [])
    foreign = []
    for root, dirs, files in os.walk(folder):
        base = Path(root)
        for name in sorted(dirs):
            path = base / name
            rel = path.relative_to(folder).as_posix()
            ok = (rel in kept_dirs or _matches(rel, kind.grows)) if recorded is not None else _matches(rel, kind.names)
            if path.is_symlink() or not ok:
                foreign.append(rel + "/")
                dirs.remove(name)  # its content goes with it
        for name in sorted(files):
            path = base / name
            rel = path.relative_to(folder).as_posix()
            if rel == MARKER or _own_temp(rel, kind, recorded):
                continue
            if path.is_symlink() or not stat.S_ISREG(path.lstat().st_mode):
                foreign.append(rel)
            elif recorded is not None:
                if rel in recorded:
                    if VOLATILE not in recorded[rel] and _sha256(path) not in recorded[rel]:
                        foreign.append(f"{rel} (changed since dptool wrote it)")
                elif not _matches(rel, kind.grows):
                    foreign.append(rel)
            elif not (_matches(rel, kind.names) and kind.signed(path, rel)):
                foreign.append(rel)
    return sorted(foreign)


def _own_temp(rel: str, kind: Kind, recorded: dict[str, list[str]] | None) -> bool:
    """Whether `rel` is a temporary file dptool left beside one of its own files: `.<name>.tmp`, `.<name>.tmp-*` or
    `.<name>.*.tmp`, <name> a file the marker records (or, an old folder, one dptool writes there) or the marker.
    A user's `kb/.notes.tmp` is theirs: matching the pattern alone is not enough."""
    folder, _, name = rel.rpartition("/")
    if not _matches(name, _TEMP):
        return False
    base = name[1:name.rfind(".tmp")]
    for target in {base, base.rpartition(".")[0]} - {""}:
        full = f"{folder}/{target}" if folder else target
        if full == MARKER or target == MARKER or (recorded is not None and full in recorded) or \
                _matches(full, kind.grows) or (recorded is None and _matches(full, kind.names)):
            return True
    return False


def _sealed_around(path: Path) -> tuple[Path, Kind] | None:
    """The nearest folder above `path` that dptool writes whole (a bundle, ...), if any."""
    for folder in path.parents:
        name = _marker_kind(folder) if (folder / MARKER).is_file() else None
        for kind in KINDS:
            if kind.sealed and (name == kind.name or (name is None and kind is BUNDLE and kind.legacy(folder))):
                return folder, kind
    return None


def _refuse_inside_sealed(path: Path, given: str | Path) -> None:
    # where the path leads too, not only how it is spelled: `--out link/x` with `link -> bundle/kb` is inside it
    around = _sealed_around(path) or _sealed_around(Path(os.path.realpath(path)))
    if around is not None:
        folder, kind = around
        how = "through `dptool generate`" if kind is BUNDLE else "when it writes that folder again"
        raise DptoolError(f"{given}: inside the {kind.name} {folder}; dptool writes into a {kind.name} only {how}: "
                          "choose a path outside it")


def check_replaceable(out: str | Path, kind: Kind) -> Path:
    """Refuse `out` unless dptool may write it: absent, empty, or a `kind` folder dptool wrote holding nothing
    else at any depth. Also refuses a destination inside a folder dptool writes whole, and one whose nearest
    existing parent cannot be written to. Returns `out` resolved."""
    given, out = out, Path(out).resolve()
    named = _named(given, out)
    if out.exists() or out.is_symlink():
        if not out.is_dir() or Path(given).is_symlink():
            raise DptoolError(f"{named}: exists and is not a folder; choose another --out")
        if any(out.iterdir()):
            marker = _read_marker(out)
            ours = marker is not None and marker.get("kind") == kind.name
            if not ours and not (marker is None and kind.legacy(out)):
                raise DptoolError(f"{named}: not empty and not a {kind.name} dptool wrote (no {MARKER} marker); "
                                  "dptool replaces only its own folders: choose an empty or new --out")
            foreign = _foreign(out, kind, marker if ours else None)
            if foreign:
                raise DptoolError(f"{named}: the {kind.name} there also holds files dptool did not write "
                                  f"({_shown(foreign)}); move them out, or choose another --out")
    _refuse_inside_sealed(out, named)
    _check_writable(out, named)
    return out


def _named(given: str | Path, full: Path) -> str:
    """The path as the user gave it, and what it is when that differs (`.`, a relative path)."""
    return str(given) if str(given) == str(full) else f"{given} ({full})"


def _check_writable(target: Path, given: str | Path) -> None:
    """`target` can be created under its nearest existing ancestor (tried, not guessed)."""
    existing = target.parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise DptoolError(f"{given}: cannot be created: {existing} is a file, not a folder; choose another --out")
    probe = existing / f".dptool-write-check-{os.getpid()}-{secrets.token_hex(4)}"  # named first: always removed
    try:
        probe.mkdir()
    except OSError as exc:
        raise DptoolError(f"{given}: cannot write here (nothing can be created in {existing}: "
                          f"{exc.strerror or exc}); choose another --out") \
            from None
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()


def staging_folder(out: Path) -> Path:
    """A new empty folder beside `out`, to be published with `publish`. What a run killed outright left beside
    `out` goes first: its staging folder, and the old folder it had moved aside (put back if `out` is gone).

    The folder is on this process's list before it exists, until it is renamed into place: a Ctrl-C that lands
    between its making and the caller's clean-up is undone by `remove_unpublished`."""
    out.parent.mkdir(parents=True, exist_ok=True)
    _clear_left_behind(out)
    while True:
        tmp = _own_name(out, "tmp")
        _UNPUBLISHED.add(tmp.absolute())  # where it is, whatever the working folder when it is removed
        try:
            tmp.mkdir()  # as mkdir makes a folder (the umask's mode): it becomes `out`
        except FileExistsError:  # a name of this pid's left by a run long gone: not this run's to remove
            _UNPUBLISHED.discard(tmp.absolute())
            continue
        return tmp


_UNPUBLISHED: set[Path] = set()  # staging folders this process made (or was making) and has not renamed into place


def _own_name(out: Path, what: str) -> Path:
    """`.<name>.<what>-<pid>-<random>` beside `out`: only this process makes names with its pid."""
    return out.parent / f".{out.name}.{what}-{os.getpid()}-{secrets.token_hex(4)}"


def rename_staged(tmp: Path, out: Path) -> None:
    """Rename a staging folder to `out` (absent or an empty folder) and take it off the list."""
    os.replace(tmp, out)
    _UNPUBLISHED.discard(tmp.absolute())  # if a Ctrl-C lands first, removing `tmp` finds nothing: it is `out` now


def remove_unpublished() -> None:
    """Remove every staging folder this process made and did not rename into place (the CLI's last step)."""
    for tmp in sorted(_UNPUBLISHED):
        shutil.rmtree(tmp, ignore_errors=True)
        _UNPUBLISHED.discard(tmp)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _clear_left_behind(out: Path) -> None:
    """The `.<name>.tmp-<pid>-*` and `.<name>.old-<pid>-*` folders of runs no longer running (named with their pid)."""
    for path in sorted(out.parent.glob(f".{glob_escape(out.name)}.*-*-*")):
        rest = path.name[len(out.name) + 2:]
        what, _, tail = rest.partition("-")
        pid = tail.split("-", 1)[0]
        if what not in ("tmp", "old") or not pid.isdigit() or _running(int(pid)) or not path.is_dir():
            continue
        if what == "old" and not out.exists():
            path.rename(out)  # killed between its two renames: the old folder is the last complete one
        else:
            shutil.rmtree(path, ignore_errors=True)


def _inventory(folder: Path, kind: Kind) -> tuple[dict[str, list[str]], list[str]]:
    """Every file under `folder` with its sha256 (VOLATILE for the kind's volatile files), and every folder."""
    files, folders = {}, []
    for root, dirs, names in os.walk(folder):
        base = Path(root)
        folders += [(base / d).relative_to(folder).as_posix() for d in dirs]
        for name in names:
            rel = (base / name).relative_to(folder).as_posix()
            if rel != MARKER:
                files[rel] = [VOLATILE if _matches(rel, kind.volatile) else _sha256(base / name)]
    return dict(sorted(files.items())), sorted(folders)


def publish(tmp: Path, out: Path, kind: Kind) -> Path:
    """Mark `tmp` as a `kind` folder (recording every file in it) and rename it to `out`, replacing `out` only if
    dptool may (checked again)."""
    files, folders = _inventory(tmp, kind)
    _write_marker(tmp, {"kind": kind.name, "dptool": __version__, "files": files, "folders": folders})
    out = check_replaceable(out, kind)
    if out.exists():
        old = _own_name(out, "old")  # if killed between the two renames, the next run puts it back
        out.rename(old)
        rename_staged(tmp, out)
        shutil.rmtree(old)
    else:
        rename_staged(tmp, out)
    return out


def check_update(folder: str | Path, kind: Kind, names: list[str]) -> None:
    """Refuse unless dptool may rewrite `names` inside `folder`: a `kind` folder it wrote, each of those files absent
    or as dptool wrote it. For a folder from before the marker recorded files, nothing in it may be foreign."""
    _update_plan(Path(folder), kind, names)


def _update_plan(folder: Path, kind: Kind, names: list[str]) -> tuple[dict, dict[str, list[str]], list[str] | None]:
    marker = _read_marker(folder)
    if not (marker is not None and marker.get("kind") == kind.name) and not (marker is None and kind.legacy(folder)):
        raise DptoolError(f"{folder}: not a {kind.name} dptool wrote")
    recorded, folders = _recorded(marker), None
    if recorded is None:  # a folder from before the marker recorded files: what it holds must all be dptool's
        foreign = _foreign(folder, kind, None)
        if foreign:
            raise DptoolError(f"{folder}: the {kind.name} there also holds files dptool did not write "
                              f"({_shown(foreign)}); move them out first")
        recorded, folders = _inventory(folder, kind)
    for rel in names:
        path = folder / rel
        hashes = recorded.get(rel, [])
        if (path.exists() or path.is_symlink()) and (not stat.S_ISREG(path.lstat().st_mode) or (
                VOLATILE not in hashes and _sha256(path) not in hashes)):
            raise DptoolError(f"{path}: changed since dptool wrote it (or dptool did not write it); move it out of "
                              "the folder first")
    return marker or {}, recorded, folders


def update_files(folder: str | Path, kind: Kind, texts: Mapping[str, str]) -> list[Path]:
    """Rewrite files inside a `kind` folder dptool wrote (ablate's table in a bundle's card.md), each in one rename,
    the marker updated; refused as `check_update` says."""
    folder = Path(folder)
    marker, recorded, folders = _update_plan(folder, kind, list(texts))
    if folders is not None:  # an old folder: its marker now records what it holds
        _write_marker(folder, {**marker, "kind": kind.name, "dptool": __version__, "files": recorded,
                               "folders": folders})
    return [_atomic_write(folder / rel, encoded(text), folder / rel, folder, rel) for rel, text in texts.items()]


# ---- single files ---------------------------------------------------------------------------------------------------

def check_file(path: str | Path) -> Path:
    """Refuse `path` unless dptool may write that file: absent, or a file dptool wrote there, unchanged since; never
    inside a folder dptool writes whole; its folder writable. Returns `path` (as given)."""
    given, path = path, Path(path)
    if not str(given).strip():
        raise DptoolError("--out is empty: name a file")
    full = Path(os.path.abspath(path))
    if full.name == MARKER or _matches(full.name, _TEMP):
        raise DptoolError(f"{given}: a name dptool keeps for its own record of what it wrote; choose another --out")
    if full.exists() or full.is_symlink():
        mode = full.lstat().st_mode
        if stat.S_ISDIR(mode):
            raise DptoolError(f"{given}: is a folder; --out names a file here")
        if not stat.S_ISREG(mode):
            raise DptoolError(f"{given}: exists and is not a regular file dptool wrote; choose another --out")
        recorded = _recorded(_read_marker(full.parent)) or {}
        if full.name not in recorded:
            raise DptoolError(f"{given}: exists and dptool did not write it; dptool replaces only files it wrote: "
                              "choose another --out, or move it away first")
        if _sha256(full) not in recorded[full.name]:
            raise DptoolError(f"{given}: changed since dptool wrote it; choose another --out, or move it away first")
    _refuse_inside_sealed(full, given)
    _check_writable(full, given)
    return path


def write_file(path: str | Path, data: str | bytes) -> Path:
    """Write one file under the rule of `check_file`, atomically (a temporary file beside it, then a rename), and
    record it in its folder's marker. DptoolError naming `path` if it cannot; nothing half-written is left."""
    given = path
    check_file(path)
    full = Path(os.path.abspath(path))
    return _atomic_write(full, encoded(data) if isinstance(data, str) else data, given, full.parent, full.name)


def check_files(folder: str | Path, names: list[str]) -> Path:
    """`check_file` for each of `names` in `folder` (a report folder: score.json, score.md, ...)."""
    given, folder = folder, Path(folder)
    full = Path(os.path.abspath(folder))
    if full.exists() and not full.is_dir():
        raise DptoolError(f"{given}: exists and is not a folder; choose another --out")
    kind = _marker_kind(full) if full.is_dir() else None
    sealed = next((k for k in KINDS if k.sealed and k.name == kind), None)
    if sealed is not None or (full.is_dir() and kind is None and BUNDLE.legacy(full)):
        sealed = sealed or BUNDLE
        how = "through `dptool generate`" if sealed is BUNDLE else "when it writes that folder again"
        raise DptoolError(f"{given}: is a {sealed.name}; dptool writes into it only {how}: choose another --out")
    _refuse_inside_sealed(full, given)  # said of the folder given, not of a file in it
    if not full.exists():
        _check_writable(full, given)
    for name in names:
        check_file(folder / name)
    return folder


def write_files(folder: str | Path, texts: Mapping[str, str]) -> list[Path]:
    """Several files into one folder, each under the rule of `check_file`, all checked before the first is
    written."""
    check_files(folder, list(texts))
    full = Path(os.path.abspath(folder))
    try:
        full.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DptoolError(f"{folder}: cannot be created ({exc.strerror or exc}); choose another --out") from None
    return [_atomic_write(full / name, encoded(text), Path(folder) / name, full, name)
            for name, text in texts.items()]


def install_files(folder: str | Path, sources: Mapping[str, Path]) -> list[Path]:
    """Move files written elsewhere on the same file system (a `staging_folder` beside `folder`: CSVs too big to
    hold in memory) into `folder` under the rule of `check_file`, each in one rename, recorded."""
    check_files(folder, list(sources))
    full = Path(os.path.abspath(folder))
    full.mkdir(parents=True, exist_ok=True)
    return [_place(full / name, Path(src), _sha256(Path(src)), Path(folder) / name, full, name)
            for name, src in sources.items()]


def _atomic_write(path: Path, data: bytes, given: str | Path, record_in: Path, rel: str) -> Path:
    """Write `data` to a temporary file beside `path` and `_place` it."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    except OSError as exc:
        raise DptoolError(f"{given}: cannot be written ({exc.strerror or exc}); choose another --out") from None
    tmp = Path(tmp_name)
    with _removed_on_failure(tmp, given), os.fdopen(fd, "wb") as f:
        os.fchmod(fd, file_mode())  # mkstemp's file is private; this one is the user's, as open() would make it
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    return _place(path, tmp, hashlib.sha256(data).hexdigest(), given, record_in, rel)


def _place(path: Path, tmp: Path, new: str, given: str | Path, record_in: Path, rel: str) -> Path:
    """Rename `tmp` to `path` and record its hash in `record_in`'s marker. The marker lists the old and the new hash
    while the rename happens: a run killed between the two leaves a file dptool still knows as its own."""
    with _removed_on_failure(tmp, given):
        marker = _read_marker(record_in) or {"kind": None, "dptool": __version__}
        files = _recorded(marker) or {}
        old = files.get(rel, []) if path.is_file() else []
        files[rel] = sorted({*old, new})
        _write_marker(record_in, {**marker, "files": dict(sorted(files.items()))})
        tmp.replace(path)
        files[rel] = [new]
        _write_marker(record_in, {**marker, "files": dict(sorted(files.items()))})
    return Path(given)


@contextlib.contextmanager
def _removed_on_failure(tmp: Path, given: str | Path) -> Iterator[None]:
    """Delete `tmp` when the block fails in any way (an interrupt too: no half-written file stays); an OSError
    becomes one line naming the path the user gave."""
    try:
        yield
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise DptoolError(f"{given}: cannot be written ({exc.strerror or exc}); nothing was written there") \
            from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


# ---- a folder dptool adds to as it goes: an eval run -----------------------------------------------------------------

def open_run_folder(out: str | Path, kind: Kind = RUN, create: bool = True) -> Path:
    """The folder of a resumable run: new (created and marked), empty, or a `kind` folder dptool made holding
    nothing else. Returns it as given. With `create` false, only checks: nothing is written."""
    given, out = out, Path(out)
    full = Path(os.path.abspath(out))
    named = _named(given, full)
    if full.exists() or full.is_symlink():
        if not full.is_dir() or full.is_symlink():
            raise DptoolError(f"{named}: exists and is not a folder; choose another --out")
        if any(full.iterdir()):
            marker = _read_marker(full)
            ours = marker is not None and marker.get("kind") == kind.name
            if not ours and not (marker is None and kind.legacy(full)):
                raise DptoolError(f"{named}: not empty and not a {kind.name} dptool made (no {MARKER} marker); "
                                  "choose an empty or new --out")
            foreign = _foreign(full, kind, marker if ours and _recorded(marker) is not None else None)
            if foreign:
                raise DptoolError(f"{named}: the {kind.name} there also holds files dptool did not write "
                                  f"({_shown(foreign)}); move them out, or choose another --out")
            if not create:
                return out
            if marker is None or _recorded(marker) is None:  # an old run: what it holds becomes dptool's record
                found = _inventory(full, kind)[0]
                files = {rel: hashes for rel, hashes in found.items() if not _matches(rel, kind.grows)}
                _write_marker(full, {**(marker or {}), "kind": kind.name, "dptool": __version__, "files": files})
            return out
    _refuse_inside_sealed(full, named)
    _check_writable(full, named)
    if not create:
        return out
    try:
        full.mkdir(parents=True, exist_ok=True)
        _write_marker(full, {"kind": kind.name, "dptool": __version__, "files": {}})
    except OSError as exc:
        raise DptoolError(f"{named}: cannot be created ({exc.strerror or exc}); choose another --out") from None
    return out
