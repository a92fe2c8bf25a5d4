"""Waiting on one pinned occupant: event driven, on the roster's own change stream.

A waiter pins a session's ``status_epoch`` and ``occupant_id`` (what it read), then follows
every change the roster publishes until exactly one outcome holds:

- ``matched``: the pinned occupant showed one of the awaited states. Every change is looked at
  in order, so a fast transition (working for a moment, then idle) is seen, not sampled away.
  With ``after_revision`` only what happened after that revision counts: a later revision in
  the awaited state, and for ``idle`` a turn that ended after it (``completed_revision``), so
  a waiter started just after sending a prompt is not satisfied by the idle it started from.
- ``occupant_changed``: the status epoch is another (the daemon restarted, or is stopping), a
  newer process occupies the pane, or the pinned one is gone while the pane stays.
- ``session_closed``: the pinned occupant is gone and so is its pane.
- ``timed_out``: the deadline passed first.

Nothing polls: between changes the waiter sleeps on its stream. The one tmux call (does the
pane still exist?) is made once, when the pinned occupant is gone, to tell the last two apart.

A face opens a waiter here (:func:`watching`), never itself: the API counts each against the
limit its SSE streams share, and a fenced prompt (:mod:`roost.actions.prompt`) opens its own
the same way, so a prompt over HTTP never reaches back up into the API for its wait.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from roost.actions.occupants import STATE_OF_ACTIVITY, occupants, pane_of
from roost.base import statusrow
from roost.base.errors import TooMany
from roost.pane.tmux import paste
from roost.pane.tmux.server import Server
from roost.truth.roster import records
from roost.truth.roster.changes import SNAPSHOT
from roost.truth.roster.live import Live, Stream
from roost.truth.roster.records import Record

if TYPE_CHECKING:
    from roost.actions.sessions import Door, Found

MATCHED, TIMED_OUT = "matched", "timed_out"
OCCUPANT_CHANGED, SESSION_CLOSED = "occupant_changed", "session_closed"
OUTCOMES = (MATCHED, TIMED_OUT, OCCUPANT_CHANGED, SESSION_CLOSED)

_GONE = "gone"
"""The pinned occupant ended with no newer one in its pane: closed or replaced, tmux decides."""


@dataclass(frozen=True)
class Pin:
    """What a caller read and holds the session to: one roster lifetime, one process."""

    status_epoch: int
    occupant_id: int


@dataclass(frozen=True)
class Until:
    """The awaited states, in the web app's words, and what counts as new (see the module)."""

    states: frozenset[str]
    after_revision: int | None = None

    def met(self, record: Record) -> bool:
        state = STATE_OF_ACTIVITY.get(record.activity)
        if state not in self.states:
            return False
        if self.after_revision is None:
            return True
        if state == statusrow.IDLE:
            return (record.completed_revision or 0) > self.after_revision
        return record.revision > self.after_revision


@dataclass(frozen=True)
class Ending:
    """How a wait ended, with the pinned occupant's record at that moment when there is one."""

    outcome: str
    record: Record | None = None


class Wait:
    """One waiter's subscription. Open it before the moment it must not miss (a prompt opens
    it at admission), then ask for the :meth:`outcome`; close it however the wait ends."""

    def __init__(self, live: Live, tmux: Server | None, pane: str, pin: Pin, until: Until) -> None:
        self.live, self.tmux, self.pane, self.pin, self.until = live, tmux, pane, pin, until
        self._socket = tmux.socket if tmux is not None else None
        self._stream: Stream = live.subscribe(replay=False)

    def close(self) -> None:
        self._stream.__exit__()

    async def outcome(self, deadline: float, clock: Callable[[], float]) -> Ending:
        """Sleep on the change stream until an outcome holds or ``deadline`` (clock seconds)."""
        verdict = self.now()
        while verdict is None:
            remaining = deadline - clock()
            if remaining <= 0:
                return Ending(TIMED_OUT, self._pinned())
            batch = await self._stream.next(remaining)
            if batch is None:  # the daemon is stopping: this status epoch ends, and the pin with it
                return Ending(OCCUPANT_CHANGED, self._pinned())
            for change in batch:
                verdict = self.now() if change.event == SNAPSHOT else self.judge(change.record)
                if verdict is not None:
                    break
        if verdict.outcome == _GONE:
            return Ending(await self._gone(), verdict.record)
        return verdict

    def now(self) -> Ending | None:
        """The outcome the roster shows at this moment, if any."""
        roster = self.live.roster
        if roster.status_epoch != self.pin.status_epoch:
            return Ending(OCCUPANT_CHANGED)
        newer = [
            r for r in occupants(roster, self._socket, self.pane) if r.occupant_id > self.pin.occupant_id
        ]
        if newer:
            return Ending(OCCUPANT_CHANGED, newer[-1])
        pinned = self._pinned()
        if pinned is None or pinned.liveness == records.ENDED:
            return Ending(_GONE, pinned)
        return Ending(MATCHED, pinned) if self.until.met(pinned) else None

    def judge(self, record: Record | None) -> Ending | None:
        """The outcome one change shows, judged on the record as it was at that change."""
        if record is None:
            return None
        if record.occupant_id == self.pin.occupant_id and self._here(record):
            if record.liveness == records.ENDED:
                return Ending(_GONE, record)
            return Ending(MATCHED, record) if self.until.met(record) else None
        if (
            record.occupant_id > self.pin.occupant_id
            and record.liveness != records.ENDED
            and self._here(record)
        ):
            return Ending(OCCUPANT_CHANGED, record)
        return None

    def _here(self, record: Record) -> bool:
        return pane_of(record, self._socket) == self.pane

    def _pinned(self) -> Record | None:
        """The pinned occupant's record, if it is (or was, lingering ended) in this pane."""
        roster = self.live.roster
        return next(
            (r for r in roster.records() if r.occupant_id == self.pin.occupant_id and self._here(r)), None
        )

    async def _gone(self) -> str:
        if self.tmux is None:
            return SESSION_CLOSED
        seen = await asyncio.to_thread(paste.look, self.tmux, self.pane)
        return SESSION_CLOSED if seen is None or seen.dead else OCCUPANT_CHANGED


T = TypeVar("T")


class Awaiter(Protocol):
    """How a face awaits an outcome it was asked for (a wait's, a gate's decision): the API lets
    go of it when its caller hangs up (None: nobody is left to tell)."""

    def __call__(self, work: Awaitable[T], /) -> Awaitable[T | None]: ...


async def whole(work: Awaitable[T]) -> T | None:
    """Await the outcome to its end: a caller that cannot hang up midway (MCP, a test)."""
    return await work


def watching(door: Door, pane: str, pin: Pin, until: Until, limit: int | None = None) -> Wait:
    """A subscribed waiter on ``pane``; with ``limit``, counted with the roster's other streams
    against it (the API's, shared with its SSE streams): TooMany when that many are open."""
    if limit is not None and door.live.streams >= limit:
        raise TooMany(f"{limit} streams are open already; close one first")
    return Wait(door.live, door.tmux, pane, pin, until)


@dataclass(frozen=True)
class Watched:
    """Where a wait on a pane ended: the pane, and the outcome (None: its caller hung up)."""

    pane: str
    ending: Ending | None


async def wait(
    door: Door,
    target: str | Found,
    pin: Pin,
    until: Until,
    deadline: float,
    *,
    limit: int | None = None,
    watch: Awaiter = whole,
) -> Watched:
    """Wait on the pinned occupant of the pane ``target`` names until an outcome holds or
    ``deadline`` (the door's clock) passes."""
    pane = door.pane(target)
    waiter = watching(door, pane, pin, until, limit)
    try:
        return Watched(pane, await watch(waiter.outcome(deadline, door.clock)))
    finally:
        waiter.close()
