"""`--out` never costs a user a file: dptool replaces only an empty folder or one it wrote itself, and says so
before any work when it may not (issue 16: `--out mydata` deleted notes.txt, `--out .` replaced the project)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dptool.errors import DptoolError
from dptool.outdir import BUNDLE, LINK, MARKER, check_replaceable, publish, staging_folder
from tests.conftest import run_cli


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _refused(proc, *fragments: str) -> str:
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "[load]" not in proc.stdout, "refused only after work had started"
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def test_a_folder_of_the_users_is_refused_and_left_as_it_was(tmp_path, demo_project):
    mydata = tmp_path / "mydata"
    mydata.mkdir()
    (mydata / "notes.txt").write_text("keep\n", encoding="utf-8")
    proc = run_cli("generate", "--project-dir", str(demo_project.project_dir), "--out", str(mydata), "--quiet")
    _refused(proc, str(mydata), "not a benchmark bundle")
    assert _tree(mydata) == {"notes.txt": b"keep\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mydata"]  # no temp folder left beside it


def test_out_dot_inside_the_project_is_refused(demo_project):
    root = demo_project.project_dir
    before = sorted(p.name for p in root.iterdir())
    # the console script, as a user runs it: `python -m` would import the project's dptool/dbt_package folder
    dptool = Path(sys.executable).with_name("dptool")
    proc = subprocess.run([str(dptool), "generate", "--out", ".", "--quiet"], cwd=root, capture_output=True,
                          text=True, timeout=120)
    _refused(proc, str(root))
    assert sorted(p.name for p in root.iterdir()) == before
    assert (root / "dbt_project.yml").is_file() and (root / "models").is_dir()


def test_a_bundle_holding_a_file_of_the_users_is_refused(tmp_path, demo_project):
    out = tmp_path / "bundle"
    out.mkdir()
    (out / MARKER).write_text(json.dumps({"kind": BUNDLE.name}), encoding="utf-8")
    (out / "tasks.jsonl").write_text("{}\n", encoding="utf-8")
    (out / "my_answers.jsonl").write_text("mine\n", encoding="utf-8")
    proc = run_cli("generate", "--project-dir", str(demo_project.project_dir), "--out", str(out), "--quiet")
    _refused(proc, "my_answers.jsonl")
    assert (out / "my_answers.jsonl").read_text(encoding="utf-8") == "mine\n"


def test_a_destination_under_a_file_is_refused(tmp_path, demo_project):
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    proc = run_cli("generate", "--project-dir", str(demo_project.project_dir), "--out", str(tmp_path / "afile" / "b"),
                   "--quiet")
    _refused(proc, "afile")


def test_a_read_only_parent_is_refused_before_any_work(tmp_path, demo_project):
    """A read-only file system, made for this process alone (root ignores file modes; a bind mount does not)."""
    if not shutil.which("unshare"):
        pytest.skip("needs util-linux unshare to mount a read-only folder")
    parent = tmp_path / "ro"
    parent.mkdir()
    script = ('mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1" && shift && exec "$@"')
    cmd = ["unshare", "-m", "sh", "-c", script, "sh", str(parent), sys.executable, "-m", "dptool.cli", "generate",
           "--project-dir", str(demo_project.project_dir), "--out", str(parent / "bundle"), "--quiet"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 1 and "mount" in proc.stderr:
        pytest.skip(f"cannot mount here: {proc.stderr.strip()}")
    _refused(proc, str(parent), "cannot write here")


def test_an_empty_folder_and_a_bundle_dptool_wrote_are_replaced(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert check_replaceable(empty, BUNDLE) == empty.resolve()
    out = tmp_path / "bundle"
    for text in ("first", "second"):
        tmp = staging_folder(out.resolve())
        (tmp / "tasks.jsonl").write_text(text, encoding="utf-8")
        publish(tmp, out.resolve(), BUNDLE)
    assert _tree(out) == {MARKER: (out / MARKER).read_bytes(), "tasks.jsonl": b"second"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle", "empty"]


def test_a_bundle_from_before_the_marker_is_still_ours(tmp_path):
    out = tmp_path / "old"
    (out / "kb").mkdir(parents=True)
    (out / "tasks.jsonl").write_text("{}\n", encoding="utf-8")
    (out / "card.md").write_text("# Benchmark card\n", encoding="utf-8")
    assert check_replaceable(out, BUNDLE) == out.resolve()


def test_a_folder_of_another_kind_is_not_taken_for_a_bundle(tmp_path):
    out = tmp_path / "links"
    out.mkdir()
    (out / MARKER).write_text(json.dumps({"kind": LINK.name}), encoding="utf-8")
    (out / "report.json").write_text("{}", encoding="utf-8")
    with pytest.raises(DptoolError, match="not a benchmark bundle"):
        check_replaceable(out, BUNDLE)
