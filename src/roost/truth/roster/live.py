"""The roster as the running daemon holds it: claims in, changes out to every open stream.

Everything here runs on the daemon's one event loop, so applying a claim, announcing its
changes and replaying history to a new subscriber never interleave: a subscriber that asks
for everything after seq N gets exactly that and then every later change, none twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from roost.truth.roster import Change, Claim, Outcome, Roster
from roost.truth.roster.backlog import Backlog
from roost.truth.roster.changes import SNAPSHOT
from roost.truth.roster.times import Clock

STREAM_BACKLOG = 1024
"""Changes a slow subscriber may fall behind by; past that it is sent one fresh snapshot."""


class Stream(Backlog[Change]):
    """One subscriber's queue of changes. A subscriber that falls too far behind is not cut
    off: its backlog is dropped and its next read is a ``snapshot`` change to start over from."""

    def __init__(self, live: Live, backlog: int) -> None:
        super().__init__(backlog)
        self._live = live

    def catch_up(self) -> tuple[Change, ...]:
        return self._live.roster.changes_since(None)

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *_: object) -> None:
        self._live.unsubscribe(self)


class Live:
    """Applies claims, wakes subscribers, and ticks the roster when a lease or linger ends."""

    def __init__(self, roster: Roster, clock: Clock, backlog: int = STREAM_BACKLOG) -> None:
        self.roster = roster
        self._clock = clock
        self._backlog = backlog
        self._streams: set[Stream] = set()
        self._own: set[Stream] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False

    @property
    def streams(self) -> int:
        """Streams held by clients; the daemon's own followers (notifications) do not count
        against ``max_streams``, or a low limit would refuse every client."""
        return len(self._streams) - len(self._own)

    def apply(self, claim: Claim) -> Outcome:
        outcome = self.roster.apply(claim)
        self._announce(outcome.changes)
        return outcome

    def overrule(self, claim: Claim, evidence: str, states: frozenset[str] | None = None) -> Outcome:
        """:meth:`Roster.overrule`, announced like every other change."""
        outcome = self.roster.overrule(claim, evidence, states)
        self._announce(outcome.changes)
        return outcome

    def apply_all(self, claims: Iterable[Claim]) -> list[Outcome]:
        return [self.apply(claim) for claim in claims]

    def subscribe(
        self,
        since: int | None = None,
        status_epoch: int | None = None,
        *,
        replay: bool = True,
        own: bool = False,
    ) -> Stream:
        """A new stream, first holding what the subscriber missed (a snapshot when ``since``
        cannot be replayed), then every change as it happens. ``own`` marks the daemon's own
        follower, which ``streams`` leaves out."""
        stream = Stream(self, self._backlog)
        if self._closed:
            stream.close()
            return stream
        if replay:
            stream.push(self.roster.changes_since(since, status_epoch))
        self._streams.add(stream)
        if own:
            self._own.add(stream)
        return stream

    def unsubscribe(self, stream: Stream) -> None:
        self._streams.discard(stream)
        self._own.discard(stream)

    def close(self) -> None:
        """End every stream (the daemon is stopping) and stop the lease timer."""
        self._closed = True
        for stream in list(self._streams):
            stream.close()
        self._streams.clear()
        self._own.clear()
        if self._timer is not None:
            self._timer.cancel()

    def _announce(self, changes: Iterable[Change]) -> None:
        batch = tuple(change for change in changes if change.event != SNAPSHOT)
        if batch:
            for stream in self._streams:
                stream.push(batch)
        self._arm()

    def _arm(self) -> None:
        """Sleep until the roster next has something to expire, not in a polling loop."""
        if self._closed:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        deadline = self.roster.deadline()
        if deadline is None:
            return
        delay = max(0.0, deadline - self._clock())
        self._timer = asyncio.get_running_loop().call_later(delay, self._tick)

    def _tick(self) -> None:
        self._timer = None
        self._announce(self.roster.tick())
