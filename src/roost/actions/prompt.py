"""One fenced prompt to a terminal pane, written once or not at all: what the API's
``POST /sessions/{key}/prompt`` (:func:`fenced`) and the MCP server's ``session.send``
(:func:`send`) both do to a pane.

The caller read a status row and pins what it saw: ``status_epoch``, ``occupant_id`` and
``revision`` (``send`` pins what the roster shows as the call arrives). The text is written
only while that exact observation still holds and the row is promptable and idle or working.
Every check is made again at the last moment before the write, on the daemon's loop (where the
roster changes), holding the pane's send lock:

=====================  ================================================================
code                   the pre-write rejection (HTTP 409; no byte reaches the pane)
=====================  ================================================================
status_epoch_changed   the daemon restarted since the caller read the row
occupant_changed       another process occupies the pane, or none does any more
revision_changed       the occupant's row changed since it was read (a newer revision)
not_promptable         a screen or legacy observation, or an incomplete identity
blocked                the agent waits on a person (a permission dialog)
over_budget            a budget holds the session: its limit is reached, until a person lifts it
session_closed         the pane is gone
deadline_expired       ``deadline_ms`` passed before the write could begin
=====================  ================================================================

Accepted text is encoded by :func:`roost.pane.tmux.paste.encode`, as ``roost send``'s is, and as a
terminal's composer sends a paste: bracketed-paste markers and every other ESC are stripped,
CR LF and lone CR become one newline each (tmux sends each as CR), tmux wraps it in
bracketed-paste markers when the program turned that mode on, and one Enter follows, all in
one tmux call that is never repeated. A write that has not finished by the deadline, or that
tmux fails for a reason other than a missing pane, is ``ambiguous``: the text may have
arrived, and it is never retried.

``written_bytes`` counts the encoded text and the Enter; the markers tmux adds (12 bytes,
only when the program asked for bracketed paste) are not visible to roost on tmux 3.3a, so
they are left out on purpose rather than guessed (docs/contracts.md, "Where contracts differ
on purpose").
Neither the text nor anything derived from it is logged, stored or put in a response.
"""

from __future__ import annotations

import asyncio
from contextlib import AbstractContextManager
from dataclasses import dataclass

from roost.actions.occupants import STATE_OF_ACTIVITY, current, promptable, source_class
from roost.actions.sessions import Door, Found
from roost.actions.waits import Awaiter, Ending, Pin, Until, Wait, watching, whole
from roost.base.errors import OVER_BUDGET, TargetGone, TooLarge, UsageError
from roost.pane.tmux import paste
from roost.services.ledger import budgets
from roost.truth.roster import Record, Roster, records

TEXT_LIMIT = 16_384
"""UTF-8 bytes a prompt may hold."""
DEFAULT_DEADLINE = 10.0
"""Seconds a prompt without ``deadline_ms`` may wait for the pane's send lock."""
REASON_LIMIT = 200

ACCEPTED, AMBIGUOUS, REJECTED = "accepted", "ambiguous", "rejected"
STATUS_EPOCH_CHANGED = "status_epoch_changed"
OCCUPANT_CHANGED = "occupant_changed"
REVISION_CHANGED = "revision_changed"
NOT_PROMPTABLE = "not_promptable"
BLOCKED = "blocked"
SESSION_CLOSED = "session_closed"
DEADLINE_EXPIRED = "deadline_expired"
_GONE = "gone"
LATE = "the deadline passed before the write could begin"
"""The pinned occupant ended and none replaced it: the pane decides closed or replaced."""

DEFINITE_FAILURES = (
    "can't find pane",
    "target pane has exited",
    "no current target",  # the pane's program ended and tmux tore the pane down meanwhile
    "no server running",
    "error connecting to",
)
"""tmux errors that stop its command list before anything is written to the pane."""


@dataclass(frozen=True)
class Ask:
    """One prompt request, checked for shape: the encoded text, the pins and the deadline; the
    states its wait is for (None: no wait), and when that wait gives up (None: the deadline)."""

    data: bytes
    pin: Pin
    revision: int
    deadline: float
    until: frozenset[str] | None
    wait_deadline: float | None = None


@dataclass(frozen=True)
class Fenced:
    """How a fenced prompt ended: the pane, the input outcome (``accepted``, ``ambiguous`` or
    ``rejected``, with the rejection's ``code``), the reason, the bytes written; the occupant's
    record as the write ended (None when nothing was written), and the wait's outcome (None:
    none was asked for, or its caller hung up)."""

    pane: str
    input: str
    code: str | None
    reason: str | None
    written_bytes: int
    record: Record | None = None
    ending: Ending | None = None


def encoded(text: str) -> bytes:
    """The text to write, checked: its byte limit is a :class:`TooLarge`, and a text of nothing
    but escapes has nothing left to send."""
    size = len(text.encode())
    if size > TEXT_LIMIT:
        raise TooLarge(f"text is {size} bytes, more than {TEXT_LIMIT} UTF-8 bytes", limit=TEXT_LIMIT)
    data = paste.encode(text)
    if not data:
        raise UsageError("text is empty once escape characters are stripped", field="text")
    return data


def _release(lock: AbstractContextManager[None]) -> None:
    """Unlock the pane: from the loop, or from the thread that wrote."""
    lock.__exit__(None, None, None)


def _reason(code: str, detail: str) -> str:
    return f"{code}: {detail}"[:REASON_LIMIT]


class Attempt:
    """One prompt's way to the pane: admission on the loop, the write in a thread, once. With
    ``limit``, its wait counts against the streams' limit (see :func:`~roost.actions.waits.watching`)."""

    def __init__(self, door: Door, pane: str, ask: Ask, limit: int | None = None) -> None:
        assert door.tmux is not None, "a pane is only found on a door with roost's tmux server"
        self.door, self.tmux, self.clock = door, door.tmux, door.clock
        self.pane, self.ask, self.limit = pane, ask, limit
        self.waiter: Wait | None = None
        self.admitted: Record | None = None
        """The pinned occupant's record as the prompt was admitted."""

    @property
    def roster(self) -> Roster:
        return self.door.live.roster

    def check(self) -> tuple[str, str] | None:
        """Why the text must not be written now, as (code, detail); None admits it. Runs on the
        loop, so the roster cannot change between this and the decision."""
        roster, pin = self.roster, self.ask.pin
        if roster.status_epoch != pin.status_epoch:
            return STATUS_EPOCH_CHANGED, f"the status epoch is {roster.status_epoch}, not {pin.status_epoch}"
        record = current(roster, self.tmux.socket, self.pane)
        if record is None or record.occupant_id < pin.occupant_id:
            return _GONE, "the pinned occupant has ended"
        if record.occupant_id != pin.occupant_id:
            return OCCUPANT_CHANGED, f"occupant {record.occupant_id} replaced {pin.occupant_id}"
        if record.revision != self.ask.revision:
            return REVISION_CHANGED, f"the row is at revision {record.revision}, not {self.ask.revision}"
        source = source_class(roster, record) if record.activity in STATE_OF_ACTIVITY else None
        if not promptable(record, source):
            return NOT_PROMPTABLE, f"the row's state came from {source or 'legacy'}, not an integration"
        if record.activity == records.NEEDS_ATTENTION:
            return BLOCKED, "the agent is blocked waiting on a person"
        if (over := budgets.refusal(record)) is not None:
            return OVER_BUDGET, over.message
        if self.clock() >= self.ask.deadline:
            return DEADLINE_EXPIRED, LATE
        return None

    def admit(self) -> tuple[str, str] | None:
        """The final check; on admission the waiter subscribes at once, so the changes the
        prompt causes cannot slip past it."""
        problem = self.check()
        if problem is None:
            self.admitted = current(self.roster, self.tmux.socket, self.pane)
        if problem is None and self.ask.until is not None:
            until = Until(self.ask.until, after_revision=self.ask.revision)
            self.waiter = watching(self.door, self.pane, self.ask.pin, until, self.limit)
        return problem

    async def run(self) -> tuple[str, str | None, str | None]:
        """(input outcome, rejection code, reason)."""
        loop = asyncio.get_running_loop()
        lock = paste.pane_lock(self.tmux, self.pane)
        locking = loop.run_in_executor(None, lock.__enter__)
        try:
            await asyncio.wait_for(asyncio.shield(locking), max(0.0, self.ask.deadline - self.clock()))
        except TimeoutError:
            locking.add_done_callback(lambda got: got.exception() is None and _release(lock))
            return REJECTED, DEADLINE_EXPIRED, _reason(DEADLINE_EXPIRED, LATE)
        try:
            problem = self.admit()
        except BaseException:
            _release(lock)
            raise
        if problem is not None:
            _release(lock)
            return await self._rejected(*problem)
        return await self._write(lock)

    async def _rejected(self, code: str, detail: str) -> tuple[str, str | None, str | None]:
        if code == _GONE:
            seen = await asyncio.to_thread(paste.look, self.tmux, self.pane)
            code = SESSION_CLOSED if seen is None or seen.dead else OCCUPANT_CHANGED
        return REJECTED, code, _reason(code, detail)

    async def _write(self, lock: AbstractContextManager[None]) -> tuple[str, str | None, str | None]:
        def write() -> tuple[int, str]:
            try:
                proc = paste.paste_once(self.tmux, self.pane, self.ask.data, enter=True)
            finally:
                _release(lock)
            return proc.returncode, proc.stderr.decode(errors="replace")

        writing = asyncio.ensure_future(asyncio.to_thread(write))
        try:
            code, error = await asyncio.wait_for(
                asyncio.shield(writing), max(0.0, self.ask.deadline - self.clock())
            )
        except TimeoutError:
            detail = "the write did not finish by the deadline; it may have arrived and is not retried"
            return AMBIGUOUS, None, detail
        if code == 0:
            return ACCEPTED, None, None
        if any(failure in error for failure in DEFINITE_FAILURES):
            self.close()
            return REJECTED, SESSION_CLOSED, _reason(SESSION_CLOSED, "the pane is gone")
        return AMBIGUOUS, None, "tmux failed during the write; the text may have arrived and is not retried"

    def close(self) -> None:
        """Let go of the waiter, if the prompt opened one."""
        if self.waiter is not None:
            self.waiter.close()
            self.waiter = None


async def fenced(
    door: Door, target: str | Found, ask: Ask, *, limit: int | None = None, watch: Awaiter = whole
) -> Fenced:
    """Write ``ask`` to the pane ``target`` names, once or not at all, then follow its wait (if
    it asked for one) with ``watch``; a rejection is an outcome here, for the face to refuse in
    its own words. ``limit`` counts the wait against the streams' limit."""
    pane = door.pane(target)
    attempt = Attempt(door, pane, ask, limit)
    try:
        outcome, code, reason = await attempt.run()
        if outcome == REJECTED:
            return Fenced(pane, outcome, code, reason, 0)
        admitted = attempt.admitted
        record = (door.live.roster.record(admitted.session_key) or admitted) if admitted else None
        ending = None
        if attempt.waiter is not None:
            deadline = ask.wait_deadline if ask.wait_deadline is not None else ask.deadline
            ending = await watch(attempt.waiter.outcome(deadline, door.clock))
        return Fenced(pane, outcome, code, reason, len(ask.data) + 1, record, ending)
    finally:
        attempt.close()


async def send(
    door: Door, target: str | Found, text: str, until: frozenset[str] | None, wait_s: float
) -> Fenced:
    """A fenced prompt pinned to what the roster shows as the call arrives: the occupant of the
    session's pane now, and its revision (MCP's ``session.send``); with ``until``, its wait
    lasts up to ``wait_s`` seconds."""
    found = door.local(target, pane_ids=False)
    occupant = current(door.live.roster, door.socket, found.pane) if found.pane is not None else None
    if found.pane is None or occupant is None:
        raise TargetGone(f"no session {found.name!r}")
    now = door.clock()
    pin = Pin(occupant.status_epoch, occupant.occupant_id)
    ask = Ask(encoded(text), pin, occupant.revision, now + DEFAULT_DEADLINE, until, now + wait_s)
    return await fenced(door, found, ask)
