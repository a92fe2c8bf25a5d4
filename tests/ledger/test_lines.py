"""The bounded JSON lines file: appends, reads back oldest first, and never holds more than its
cap twice over, keeping the newest lines."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from roost.services.ledger.lines import Lines


def test_lines_read_back_in_order_from_a_private_file(tmp_path: Path) -> None:
    lines = Lines(tmp_path / "ledger" / "journal.jsonl")
    assert list(lines.read()) == []
    for n in range(3):
        assert lines.append({"n": n, "text": "é"})
    assert list(lines.read()) == [{"n": 0, "text": "é"}, {"n": 1, "text": "é"}, {"n": 2, "text": "é"}]
    assert stat.S_IMODE(lines.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(lines.path.parent.stat().st_mode) == 0o700
    assert lines.path.read_text().splitlines()[0] == '{"n":0,"text":"é"}'


def test_writing_past_the_cap_keeps_the_file_bounded_and_the_newest_lines(tmp_path: Path) -> None:
    cap = 4096
    lines = Lines(tmp_path / "usage.jsonl", cap=cap)
    written = 2000
    for n in range(written):
        lines.append({"n": n, "pad": "x" * 40})
    assert lines.path.stat().st_size <= cap
    assert lines.older.stat().st_size <= cap
    assert sorted(p.name for p in tmp_path.iterdir()) == ["usage.jsonl", "usage.jsonl.1"]
    kept = [doc["n"] for doc in lines.read()]
    assert kept == list(range(written - len(kept), written))  # the newest, in order, none lost between
    assert len(kept) > cap // 60  # more than one file's worth: the older generation is read too


def test_a_cap_below_a_kilobyte_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least 1024"):
        Lines(tmp_path / "x.jsonl", cap=100)


def test_lines_that_are_not_json_objects_and_a_half_written_line_are_skipped(tmp_path: Path) -> None:
    lines = Lines(tmp_path / "j.jsonl")
    lines.append({"n": 1})
    with open(lines.path, "ab") as file:
        file.write(b"not json\n[1, 2]\n\xff\xfe\n")
    lines.append({"n": 2})
    with open(lines.path, "ab") as file:
        file.write(b'{"n": 3}')  # no newline yet: being written
    assert list(lines.read()) == [{"n": 1}, {"n": 2}]


def test_matches_reads_both_files_oldest_first_without_json(tmp_path: Path) -> None:
    lines = Lines(tmp_path / "j.jsonl", cap=1024)
    for n in range(40):
        lines.append({"n": n, "pad": "x" * 30})
    found = [int(m[1]) for m in lines.matches(re.compile(rb'^\{"n":(\d+),', re.MULTILINE))]
    assert lines.older.exists() and found == [doc["n"] for doc in lines.read()] and found[-1] == 39


def test_a_read_that_meets_a_rotation_between_its_two_opens_reads_that_file_once(tmp_path: Path) -> None:
    lines = Lines(tmp_path / "j.jsonl")
    lines.append({"n": 1})
    os.link(lines.path, lines.older)  # what a rotation between the two opens leaves a reader
    assert list(lines.read()) == [{"n": 1}]


def test_a_disk_that_refuses_a_write_costs_the_line_not_the_caller(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where the directory should be")
    lines = Lines(blocked / "j.jsonl")
    assert lines.append({"n": 1}) is False
    assert list(lines.read()) == []


def test_every_line_is_one_json_document(tmp_path: Path) -> None:
    lines = Lines(tmp_path / "j.jsonl")
    lines.append({"text": "line\nbreak\u2028"})
    [raw] = lines.path.read_bytes().splitlines()
    assert json.loads(raw) == {"text": "line\nbreak\u2028"}
