"""What a member's ledger lines must be before ``/swarm/journal`` and ``/swarm/usage`` pass them
on: a journal line roost writes, usage sums roost counts; anything else is left out (and
counted, which tests/mesh/test_nodes_ledgers.py sees from the outside)."""

from __future__ import annotations

from typing import Any

import pytest

from roost.faces.api.swarmledger import _entry, _row

LINE = {
    "at": "2026-12-01T09:00:00.000Z",
    "kind": "answer",
    "session_key": "bbbbbbbbbbbbbbbb:10:5",
    "name": None,
    "answer": "allow",
    "by": "browser",
    "via": "web",
}
ROW = {
    "harness": "fake",
    "model": "m1",
    "turns": 2,
    "sessions": 1,
    "tokens": {"input": 1, "output": 2, "thought": 0, "cached_read": 0, "cached_write": 0, "total": 3},
    "cost": {"USD": 0.5},
}


def test_a_line_roost_writes_passes_as_it_is() -> None:
    assert _entry(dict(LINE)) == LINE
    assert _row(dict(ROW)) == ROW


@pytest.mark.parametrize(
    "bad",
    [
        {"kind": "rumour"},
        {"at": "yesterday"},
        {"session_key": ""},
        {"session_key": 7},
        {"by": "x" * 2000},
        {"by": {"nested": True}},
        {"by": True},
    ],
)
def test_a_journal_line_that_is_not_roosts_is_left_out(bad: dict[str, Any]) -> None:
    assert _entry({**LINE, **bad}) is None
    assert _entry(["not", "a", "line"]) is None


@pytest.mark.parametrize(
    "bad",
    [
        {"turns": -1},
        {"sessions": True},
        {"turns": 2.5},
        {"tokens": {"input": 1}},
        {"tokens": {**ROW["tokens"], "input": -3}},
        {"cost": {"USD": -1.0}},
        {"cost": {"USD": float("nan")}},
        {"cost": {"USD": "free"}},
        {"cost": {"": 1.0}},
        {"harness": ""},
        {"model": None},
    ],
)
def test_usage_sums_that_are_not_roosts_are_left_out(bad: dict[str, Any]) -> None:
    assert _row({**ROW, **bad}) is None
