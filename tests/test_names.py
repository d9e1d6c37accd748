"""File names made from data: a plain id keeps its name; any other stays one file of its folder, distinct."""

from __future__ import annotations

from pathlib import Path

import pytest

from dptool.files.names import MAX_STEM, file_name, transcript_name


@pytest.mark.parametrize("name", ["t_0001", "cf_00804458", "a.b-c_d", "9"])
def test_a_plain_name_is_kept(name):
    assert file_name(name) == name


HOSTILE = ["../../../victim/notes", "/etc/passwd", "a/b", "a\\b", "t" * 300, "..", ".", "", ".hidden", "a..b",
           "C:\\x", "A", "nul\x00byte", "\ud800 52", "café", "~", "-1"]


@pytest.mark.parametrize("name", HOSTILE)
def test_any_other_name_stays_one_file_of_its_folder(name, tmp_path):
    made = file_name(name)
    assert made and len(made) <= MAX_STEM and made not in (".", "..") and not made.startswith((".", "-"))
    assert all(c.isascii() and (c.isalnum() or c in "._-~") for c in made) and made == made.lower()
    path = tmp_path / f"{made}-1.json"
    path.write_text("x", encoding="utf-8")  # a real file, directly in its folder
    assert path.parent == tmp_path and list(tmp_path.iterdir()) == [path]


def test_different_names_never_share_a_file():
    names = [*HOSTILE, "a_b", "a", "t" * 299, "t" * 301, "\ud801 52", "cafe", "x" * 90 + "/1", "x" * 90 + "/2"]
    made = [file_name(n) for n in names]
    assert len(set(made)) == len(names)
    assert len({m.lower() for m in made}) == len(names)  # case-insensitive file systems too


def test_a_transcript_name_is_the_id_s_file_name_and_the_attempt():
    assert transcript_name("t_0001", 2) == "t_0001-2.json"
    assert transcript_name("a/b", 1) == f"{file_name('a/b')}-1.json" and "/" not in transcript_name("a/b", 1)
    assert Path(transcript_name("../x", 1)).name == transcript_name("../x", 1)
