"""Shared pieces for the roster's unit tests: a clock the test moves by hand, and claim builders."""

from __future__ import annotations

from typing import Any

from roost.truth.roster import Claim, ProcessId, Record, Roster

NODE, NODE_ID = "gibson", "n0de"
ROOT = ProcessId(4242, 1000)


class Clock:
    """Time that passes only when a test says so."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def key(process: ProcessId = ROOT) -> str:
    return f"{NODE_ID}:{process.pid}:{process.start_ticks}"


def claim(clock: Clock, source: str = "hook", process: ProcessId | None = ROOT, **kw: Any) -> Claim:
    """A claim received now; by process unless the test addresses it by key."""
    return Claim(source=source, received_at=clock.now, process=process, **kw)


def roster(clock: Clock, **kw: Any) -> Roster:
    return Roster(NODE, NODE_ID, clock, status_epoch=kw.pop("status_epoch", 7), **kw)


def events(outcome_or_changes: Any) -> list[str]:
    """The change names an outcome (or a tuple of changes) produced."""
    changes = getattr(outcome_or_changes, "changes", outcome_or_changes)
    return [change.event for change in changes]


def current(hub: Roster, session: str | None = None) -> Record:
    """The session's record, which the test expects to exist."""
    record = hub.record(session or key())
    assert record is not None, f"no record for {session or key()}"
    return record


def explained(hub: Roster, session: str | None = None) -> dict[str, Any]:
    view = hub.explain(session or key())
    assert view is not None, f"nothing to explain for {session or key()}"
    return view
