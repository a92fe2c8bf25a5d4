"""The daemon's ledger keeper: follows the roster's changes into the journal and the usage
file, and puts each session's spend on its record.

It subscribes as it is built, so build it once the roster is rebuilt and before anything else
may change it: what the rebuild put in the roster is its baseline (sessions the journal never
started are started ``found``), and every change after that is news, held in its stream until
``async with`` reads the files back (off the loop) and starts following. It takes each batch of
changes in one go, on the daemon's loop, one small append per line it writes.

A turn's end is counted once, in both lanes. A headless session's turn is what its record says
(ACP), counted at once. A pane's turn is what its agent wrote to its own transcript since the
last turn counted (:mod:`roost.services.ledger.transcripts`), read off the loop a moment after
its end (:data:`SETTLE`), one read at a time per session and in the order the turns ended.
Each counted turn moves the session's ``spend`` on its record, claimed as rosterd's own word
(the ``launcher`` source, which nothing outranks and no client may speak as), and on its
pane's options (``@roost-spend``), and is handed to the budgets
(:mod:`roost.services.ledger.budgets`), which say on the records what a budget makes of it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from roost.agents import manifest
from roost.agents.model import Usage as Spec
from roost.services.ledger import transcripts
from roost.services.ledger.journal import Journal
from roost.services.ledger.transcripts import Answer, Transcript
from roost.services.ledger.usage import Turn, Usage
from roost.truth.roster import records
from roost.truth.roster.changes import SNAPSHOT, Change
from roost.truth.roster.claims import Claim
from roost.truth.roster.live import Live
from roost.truth.roster.precedence import LAUNCHER
from roost.truth.roster.records import Record
from roost.truth.roster.times import Clock

if TYPE_CHECKING:
    from roost.pane.tmux.server import Server
    from roost.services.ledger.budgets import Budgets

log = logging.getLogger("rosterd")

FOLLOW_TIMEOUT = 60.0
"""Seconds the follower sleeps on a quiet stream before looking again (it wakes on any change)."""
PEEK_EVERY = 2.0
"""Seconds between looks at a pane's transcript while its turn runs, for the budgets: at a
change of its record, and on a timer while none comes (an agent says nothing while its model
thinks, after an answer that may have crossed a budget)."""
SETTLE = 0.5
"""Seconds a pane's turn end is let settle before its transcript is read: an agent may hold
its writes back a moment, and its hook tells the turn's end before the turn's last answer is
on disk (Claude Code 2.1.332 flushes its transcript every 100 ms, and its Stop hook fires
first: read at once, 2 turns in 5 missed their answer, which then counted with the next turn)."""


class Ledger:
    """Use as ``async with``: following starts on entry and stops on exit. ``tmux`` is roost's
    tmux server, whose panes get their session's spend as options; ``budgets`` are told of
    every turn counted (None: no budgets are kept)."""

    def __init__(
        self,
        live: Live,
        journal: Journal,
        usage: Usage,
        clock: Clock,
        *,
        tmux: Server | None = None,
        budgets: Budgets | None = None,
    ) -> None:
        self.live = live
        self.journal = journal
        self.usage = usage
        self.tmux = tmux
        self.budgets = budgets
        self._clock = clock
        self._stream = live.subscribe(replay=False, own=True)
        self._last: dict[str, Record] = {
            record.session_key: record for record in live.roster.records() if record.liveness != records.ENDED
        }
        self._follower: asyncio.Task[None] | None = None
        self._stopping = False
        self._transcripts: dict[str, tuple[str, Transcript | None]] = {}
        """Each pane session's id and its transcript as counted so far (None: not found yet)."""
        self._work: dict[str, asyncio.Task[None]] = {}
        """The last read of each session's transcript, which the next one waits for."""
        self._peeked: dict[str, float] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        """Each pane session whose turn runs, and the timer of its next look."""
        if budgets is not None:
            budgets.marked = self.mark

    async def __aenter__(self) -> Ledger:
        """Read the files back off the loop, take the roster as it was when this was built as
        the baseline, then follow every change since, in order."""
        await asyncio.to_thread(self._recall)
        self.journal.baseline(self._last.values(), self._clock())
        self.usage.baseline(self._last.values())
        for record in self._last.values():
            self._watch(record)
            self._restore(record)
        self._follower = asyncio.create_task(self._follow())
        return self

    def _recall(self) -> None:
        self.journal.recall()
        self.usage.recall()

    async def __aexit__(self, *_: object) -> None:
        """Take what is still waiting, then stop. The follower is woken, not cancelled: a
        cancelled ``wait_for`` that was about to return drops the cancellation (Python 3.11)."""
        self._stopping = True
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._stream.push(())
        if self._follower is not None:
            await self._follower
        await self.settled()
        self._stream.__exit__()

    async def settled(self) -> None:
        """Wait until every read queued so far (and every one those queued) has finished."""
        while self._work:
            await asyncio.gather(*self._work.values(), return_exceptions=True)

    async def _follow(self) -> None:
        while (batch := await self._stream.next(FOLLOW_TIMEOUT)) is not None:
            self.take(batch)
            if self._stopping:
                return

    def take(self, batch: tuple[Change, ...]) -> None:
        """One batch of changes, in order. A failure is logged and the next batch taken: a bug
        here must cost one line, not the journal from then on."""
        try:
            for change in batch:
                if change.event == SNAPSHOT:
                    self._resync(change)
                elif change.record is not None:
                    self._observe(change.record, change.at)
            self.journal.flush()
        except Exception:
            log.exception("the ledger could not take a batch of changes")

    def _observe(self, record: Record, at: float) -> None:
        key = record.session_key
        before = self._last.get(key)
        if before is not None and before.revision >= record.revision:
            return  # the same record again (one claim can make several changes)
        self.journal.observe(before, record, at)
        self._meter(before, record, at)
        if record.liveness == records.ENDED:
            self._last.pop(key, None)
            self._transcripts.pop(key, None)
            self._peeked.pop(key, None)
            self.usage.forget(key)
            if self.budgets is not None:
                self.budgets.ended(key)
        else:
            self._last[key] = record

    def _restore(self, record: Record) -> None:
        """A session the daemon found as it started: the spend its ledger counted before is
        put back on its record (a roster is rebuilt with none)."""
        spend = self.usage.spend(record.session_key)
        if spend is not None and record.spend != spend:
            key = record.session_key
            self.live.apply(Claim(LAUNCHER, self._clock(), session_key=key, fields={"spend": spend}))
            self.mark(key)

    def _resync(self, change: Change) -> None:
        """The follower fell behind and was sent the roster whole: take each session as it is
        now, and end the ones that left it meanwhile."""
        now = [records.from_json(doc) for doc in (change.snapshot or {}).get("records", [])]
        present = {record.session_key for record in now}
        for key, record in list(self._last.items()):
            if key not in present:
                self.journal.gone(record, change.at)
                self.usage.forget(key)
                self._transcripts.pop(key, None)
                del self._last[key]
        for record in now:
            self._observe(record, change.at)

    # What a turn used.

    def _meter(self, before: Record | None, after: Record, at: float) -> None:
        if after.liveness == records.ENDED:
            return
        if after.lane == "headless":
            turn = self.usage.acp_turn(before, after)
            if turn is not None:
                self._counted(after, turn, at)
            elif self.budgets is not None and after.activity in records.BUSY:
                running = self.usage.running(after)
                if running is not None:
                    self.budgets.running(after.session_key, running)
            return
        ended = before is not None and after.completed_revision not in (None, before.completed_revision)
        spec = self._watch(after)
        if spec is None:
            return
        if ended:
            self._queue(after.session_key, lambda: self._turn_ended(spec, after, at))
        elif after.activity in records.BUSY and self.budgets is not None:
            self._look(spec, after)

    def _look(self, spec: Spec, record: Record, due: bool = False) -> None:
        """Look at the turn under way of ``record``'s session, unless one looked less than
        :data:`PEEK_EVERY` ago (``due``: the timer says it is time), and look again on a timer
        while it runs."""
        key = record.session_key
        now = self._clock()
        if due or now - self._peeked.get(key, 0.0) >= PEEK_EVERY:
            self._peeked[key] = now
            self._queue(key, lambda: self._peek(spec, record))
        if key not in self._timers and not self._stopping:
            self._timers[key] = asyncio.get_running_loop().call_later(PEEK_EVERY, self._tick, spec, key)

    def _tick(self, spec: Spec, key: str) -> None:
        """A look's timer: while the session's turn runs and a budget is in force, look again,
        unless a change of its record just made a look."""
        del self._timers[key]
        record = self._last.get(key)
        if record is None or record.activity not in records.BUSY or self._stopping:
            return
        if self.budgets is not None and self.budgets.limits():
            self._look(spec, record, due=self._clock() - self._peeked.get(key, 0.0) >= PEEK_EVERY / 2)

    def _watch(self, record: Record) -> Spec | None:
        """The manifest's ``[usage]`` for a pane session whose agent records its usage, its
        transcript looked for the first time its session id is known (off the loop); None for a
        session with nothing to read."""
        if record.lane == "headless" or not record.harness or not record.session_id:
            return None
        agent = manifest.load(record.harness)
        spec = agent.usage if agent is not None else None
        if spec is None:
            return None
        key = record.session_key
        known = self._transcripts.get(key)
        if known is None or known[0] != record.session_id:
            self._transcripts[key] = (record.session_id, None)
            recalled = self.usage.reads.get(key)
            session_id, started = record.session_id, record.started_at
            self._queue(key, lambda: self._open(key, spec, session_id, recalled, started))
        return spec

    def _queue(self, key: str, step: Callable[[], Awaitable[None]]) -> None:
        """Run ``step`` after the session's steps queued before it, on the loop."""
        previous = self._work.get(key)

        async def run() -> None:
            if previous is not None:
                await asyncio.gather(previous, return_exceptions=True)
            try:
                await step()
            except Exception:
                log.exception("the ledger could not read what a turn of %s used", key)
            if self._work.get(key) is task:
                del self._work[key]

        task = asyncio.ensure_future(run())
        self._work[key] = task

    async def _open(
        self, key: str, spec: Spec, session_id: str, recalled: dict[str, Any] | None, started: float
    ) -> None:
        def open_it() -> Transcript | None:
            path = transcripts.located(spec, session_id)
            if path is None:
                return None
            if recalled is not None and recalled.get("path") == path:
                return Transcript.opened(spec, path, recalled["offset"], session_id=session_id)
            return Transcript.opened(spec, path, since=started, session_id=session_id)

        found = await asyncio.to_thread(open_it)
        if self._transcripts.get(key, ("",))[0] == session_id:
            self._transcripts[key] = (session_id, found)

    async def _read(self, spec: Spec, record: Record, count: bool) -> tuple[Transcript, list[Answer]] | None:
        """The answers of the session's turn (a turn's end moves the count on, a look does not),
        off the loop; None when its file is not there (yet). A file that was not there when the
        session was first seen is the session's own from its first byte."""
        key = record.session_key
        known = self._transcripts.get(key)
        if known is None or known[0] != record.session_id:
            return None
        session_id, transcript = known

        def read() -> tuple[Transcript | None, list[Answer]]:
            found = transcript
            if found is None:
                path = transcripts.located(spec, session_id)
                found = Transcript(spec, path, 0, session_id=session_id) if path is not None else None
            if found is None:
                return None, []
            return found, (found.turn() if count else found.peek())

        found, answers = await asyncio.to_thread(read)
        if found is None:
            return None
        if self._transcripts.get(key, ("",))[0] == session_id:
            self._transcripts[key] = (session_id, found)
        return found, answers

    async def _turn_ended(self, spec: Spec, record: Record, at: float) -> None:
        await asyncio.sleep(SETTLE)
        read = await self._read(spec, record, count=True)
        key = record.session_key
        self._peeked.pop(key, None)
        if read is None:
            return
        found, answers = read
        turn = self._answered(answers)
        if turn is not None and key in self._last:
            self._counted(self._last[key], turn, at, {"path": found.path, "offset": found.offset})

    async def _peek(self, spec: Spec, record: Record) -> None:
        """A look at the turn under way, for the budgets: nothing is counted."""
        read = await self._read(spec, record, count=False)
        turn = self._answered(read[1]) if read is not None else None
        if turn is not None and self.budgets is not None:
            self.budgets.running(record.session_key, turn)

    def _answered(self, answers: list[Answer]) -> Turn | None:
        """A turn of ``answers``, each priced by its own model; its cost unknown when one's is."""
        if not answers:
            return None
        tokens: dict[str, int] = {}
        costs: list[tuple[float, str] | None] = []
        for answer in answers:
            for name, count in answer.tokens.items():
                tokens[name] = tokens.get(name, 0) + count
            costs.append(self.usage.prices.cost(answer.model, answer.tokens))
        currencies = {cost[1] for cost in costs if cost is not None}
        cost = None
        if all(cost is not None for cost in costs) and len(currencies) == 1:
            cost = (round(sum(cost[0] for cost in costs if cost is not None), 9), currencies.pop())
        tokens.pop("cached_write_1h", None)
        return Turn(tokens, cost, "prices" if cost is not None else None, answers[-1].model)

    def _counted(self, record: Record, turn: Turn, at: float, read: dict[str, Any] | None = None) -> None:
        """Write the turn, put the session's spend on its record and its pane, tell the budgets."""
        spend = self.usage.count(record, turn, at, read)
        if self.budgets is not None:
            self.budgets.counted(record, turn, spend)
            return
        key = record.session_key
        self.live.apply(Claim(LAUNCHER, self._clock(), session_key=key, fields={"spend": spend}))
        self.mark(key)

    def mark(self, key: str) -> None:
        """Put the session's spend and budget on its pane's options, off the loop."""
        record = self.live.roster.record(key)
        pane = _pane(record, self.tmux)
        if record is None or pane is None or self.tmux is None:
            return
        from roost.pane.state import panestate

        spent = _compact(record.spend)
        budget = _compact(record.budget)
        server = self.tmux
        self._queue(key, lambda: asyncio.to_thread(panestate.spend, server, pane, spent, budget))


def _pane(record: Record | None, tmux: Server | None) -> str | None:
    found = (record.tmux or {}) if record is not None else {}
    pane = found.get("pane")
    if tmux is None or found.get("socket") != tmux.socket or not isinstance(pane, str):
        return None
    return pane


def _compact(value: object) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
