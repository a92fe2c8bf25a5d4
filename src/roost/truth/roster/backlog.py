"""A subscriber's queue of changes that never cuts a slow reader off.

The roster's change stream (:class:`roost.truth.roster.live.Stream`) and the swarm's feed
(:class:`roost.remote.swarm.feed.Subscription`) hand each subscriber its own queue. A reader that
falls more than ``backlog`` changes behind has them dropped, and its next read is whatever its
owner gives to start over from (a snapshot), so one stalled client never holds the others'
memory. The owner says what that is in :meth:`Backlog.catch_up`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Iterable
from typing import Generic, TypeVar

T = TypeVar("T")


class Backlog(Generic[T]):
    """One subscriber's waiting changes, woken when more come or the owner closes it."""

    def __init__(self, backlog: int) -> None:
        self._backlog = backlog
        self._pending: deque[T] = deque()
        self._wake = asyncio.Event()
        self._behind = False
        self.closed = False

    def push(self, changes: Iterable[T]) -> None:
        self._pending.extend(changes)
        if len(self._pending) > self._backlog:
            self._pending.clear()
            self._behind = True
        self._wake.set()

    def close(self) -> None:
        self.closed = True
        self._wake.set()

    def poke(self) -> None:
        """Wake the reader with nothing new: its next read returns at once, possibly empty. One
        timer can then keep many quiet streams alive (:class:`roost.remote.mesh.exchange.Exchange`),
        rather than a timeout per read of each."""
        self._wake.set()

    def catch_up(self) -> tuple[T, ...]:
        """What a subscriber that fell behind reads instead of the changes it missed."""
        raise NotImplementedError

    async def next(self, timeout: float | None) -> tuple[T, ...] | None:
        """The changes waiting (after at most ``timeout`` seconds, or a :meth:`poke`: possibly
        none; with no timeout, only a change, a poke or the end wake it), or None once the
        owner has closed the queue."""
        if not self._pending and not self._behind and not self.closed:
            if timeout is None:
                await self._wake.wait()
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout)
        self._wake.clear()
        if self.closed:
            return None
        if self._behind:
            self._behind = False
            self._pending.clear()
            return self.catch_up()
        batch = tuple(self._pending)
        self._pending.clear()
        return batch
