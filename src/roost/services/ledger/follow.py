"""The daemon's ledger keeper: follows the roster's changes into the journal and the usage file.

It subscribes as it is built, so build it once the roster is rebuilt and before anything else
may change it: what the rebuild put in the roster is its baseline (sessions the journal never
started are started ``found``), and every change after that is news, held in its stream until
``async with`` reads the files back (off the loop) and starts following. It takes each batch of
changes in one go, on the daemon's loop, one small append per line it writes.
"""

from __future__ import annotations

import asyncio
import logging

from roost.services.ledger.journal import Journal
from roost.services.ledger.usage import Usage
from roost.truth.roster import records
from roost.truth.roster.changes import SNAPSHOT, Change
from roost.truth.roster.live import Live
from roost.truth.roster.records import Record
from roost.truth.roster.times import Clock

log = logging.getLogger("rosterd")

FOLLOW_TIMEOUT = 60.0
"""Seconds the follower sleeps on a quiet stream before looking again (it wakes on any change)."""


class Ledger:
    """Use as ``async with``: following starts on entry and stops on exit."""

    def __init__(self, live: Live, journal: Journal, usage: Usage, clock: Clock) -> None:
        self.journal = journal
        self.usage = usage
        self._clock = clock
        self._stream = live.subscribe(replay=False, own=True)
        self._last: dict[str, Record] = {
            record.session_key: record for record in live.roster.records() if record.liveness != records.ENDED
        }
        self._follower: asyncio.Task[None] | None = None
        self._stopping = False

    async def __aenter__(self) -> Ledger:
        """Read the files back off the loop, take the roster as it was when this was built as
        the baseline, then follow every change since, in order."""
        await asyncio.to_thread(self._recall)
        self.journal.baseline(self._last.values(), self._clock())
        self.usage.baseline(self._last.values())
        self._follower = asyncio.create_task(self._follow())
        return self

    def _recall(self) -> None:
        self.journal.recall()
        self.usage.recall()

    async def __aexit__(self, *_: object) -> None:
        """Take what is still waiting, then stop. The follower is woken, not cancelled: a
        cancelled ``wait_for`` that was about to return drops the cancellation (Python 3.11)."""
        self._stopping = True
        self._stream.push(())
        if self._follower is not None:
            await self._follower
        self._stream.__exit__()

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
        self.usage.observe(before, record, at)
        if record.liveness == records.ENDED:
            self._last.pop(key, None)
        else:
            self._last[key] = record

    def _resync(self, change: Change) -> None:
        """The follower fell behind and was sent the roster whole: take each session as it is
        now, and end the ones that left it meanwhile."""
        now = [records.from_json(doc) for doc in (change.snapshot or {}).get("records", [])]
        present = {record.session_key for record in now}
        for key, record in list(self._last.items()):
            if key not in present:
                self.journal.gone(record, change.at)
                self.usage.forget(key)
                del self._last[key]
        for record in now:
            self._observe(record, change.at)
