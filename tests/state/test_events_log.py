"""The events log on its own: cursors, resuming, rotation, clearing, locking, privacy."""

from __future__ import annotations

import multiprocessing
import stat
from pathlib import Path

import pytest

from roost.pane.state.events import LOG, BadCursor, Cursor, CursorGone, Log


@pytest.fixture
def log(tmp_path: Path) -> Log:
    return Log(tmp_path / "events")


def record(n: int, pane: str = "%1") -> dict:
    return {"server": "k", "pane": pane, "event": "state", "from": None, "to": "working", "n": n}


def cursors(lines: list[dict]) -> list[str]:
    return [line["cursor"] for line in lines]


def test_cursor_round_trip():
    cursor = Cursor.parse("1789000000-5151:1:1834")
    assert (cursor.log_id, cursor.gen, cursor.seq) == ("1789000000-5151", 1, 1834)
    assert str(cursor) == "1789000000-5151:1:1834"


@pytest.mark.parametrize("text", ["", "x", "a:b", "a:1:x", "a:x:1", ":1:1", "a:1:1:1", "a:-1:1", "a:1: 2"])
def test_bad_cursor(text):
    with pytest.raises(BadCursor):
        Cursor.parse(text)


def test_append_fills_schema_ts_and_cursor(log):
    line = log.append(record(1))
    assert list(line)[:2] == ["schema", "ts"] and line["schema"] == 1 and isinstance(line["ts"], int)
    assert list(line)[-1] == "cursor"
    assert Cursor.parse(line["cursor"]).seq == 1
    assert log.read() == [line]


def test_sequence_numbers_increase_and_read_since_resumes(log):
    lines = [log.append(record(n)) for n in range(5)]
    assert [Cursor.parse(c).seq for c in cursors(lines)] == [1, 2, 3, 4, 5]
    assert log.read() == lines
    for n, line in enumerate(lines):
        assert log.read(Cursor.parse(line["cursor"])) == lines[n + 1 :]


def test_empty_log_reads_nothing(log):
    assert log.read() == []


def test_cursor_of_another_log_or_beyond_the_end_is_gone(log):
    line = log.append(record(1))
    cursor = Cursor.parse(line["cursor"])
    with pytest.raises(CursorGone):
        log.read(Cursor("other-id", cursor.gen, cursor.seq))
    with pytest.raises(CursorGone):
        log.read(Cursor(cursor.log_id, cursor.gen, cursor.seq + 1))


def test_rotation_keeps_between_keep_and_a_quarter_more(log, monkeypatch):
    monkeypatch.setenv("ROOST_EVENTS_KEEP", "8")
    lines = [log.append(record(n)) for n in range(40)]
    kept = log.read()
    assert 8 <= len(kept) <= 10
    assert kept == lines[-len(kept) :]
    first_kept = Cursor.parse(kept[0]["cursor"])
    assert Cursor.parse(lines[-1]["cursor"]).gen > Cursor.parse(lines[0]["cursor"]).gen
    # the line just before the first kept one still resumes; older ones are gone
    before = Cursor.parse(lines[-len(kept) - 1]["cursor"])
    assert log.read(before) == kept
    with pytest.raises(CursorGone):
        log.read(Cursor.parse(lines[0]["cursor"]))
    assert log.read(first_kept) == kept[1:]


def test_clear_makes_every_cursor_gone_and_starts_a_new_log(log):
    old = log.append(record(1))
    log.clear()
    assert log.read() == []
    with pytest.raises(CursorGone):
        log.read(Cursor.parse(old["cursor"]))
    new = log.append(record(2))
    assert Cursor.parse(new["cursor"]).log_id != Cursor.parse(old["cursor"]).log_id
    with pytest.raises(CursorGone):
        log.read(Cursor.parse(old["cursor"]))


def test_position_changes_with_each_line_and_with_clear(log):
    assert log.position() is None
    log.append(record(1))
    first = log.position()
    log.append(record(2))
    second = log.position()
    assert first != second and first[0] == second[0]
    log.clear()
    assert log.position() is None


def test_a_broken_line_is_skipped(log):
    log.append(record(1))
    with open(log.dir / LOG, "a") as f:
        f.write("{not json\n")
    log.append(record(2))
    assert [line["n"] for line in log.read()] == [1, 2]


def test_files_are_private(log):
    log.append(record(1))
    assert stat.S_IMODE(log.dir.stat().st_mode) == 0o700
    for path in log.dir.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_append_derived_sees_the_lines_and_appends_in_order(log):
    log.append(record(1, "%1"))
    written = log.append_derived(lambda lines: [record(len(lines) + 1, "%2"), record(len(lines) + 2, "%3")])
    assert [line["n"] for line in written] == [2, 3]
    assert log.read() == [log.read()[0], *written]
    assert log.append_derived(lambda lines: []) == []
    assert len(log.read()) == 3


def _close_once(directory: str, barrier) -> None:
    barrier.wait()
    Log(Path(directory)).append_derived(
        lambda lines: [] if any(x["event"] == "closed" for x in lines) else [{"event": "closed"}]
    )


def test_append_derived_is_atomic_across_processes(log):
    log.append(record(1))
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(8)
    procs = [ctx.Process(target=_close_once, args=(str(log.dir), barrier)) for _ in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
    assert [p.exitcode for p in procs] == [0] * 8
    assert [line["event"] for line in log.read()] == ["state", "closed"]
