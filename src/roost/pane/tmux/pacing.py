"""Pacing for event-driven work: rerun a job instead of stacking it, report at most so often.

Both exist so that a burst of tmux notifications costs a bounded amount of work, and so
that nothing runs (no timer, no task) once the burst is over.

The coalescer's time is a :class:`Clock` it is handed: the running event loop unless a test
hands in one it steps by hand, so a test of an interval does not wait the interval out.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

logger = logging.getLogger(__name__)


class Timer(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    """What the coalescer asks of time; an asyncio event loop is one."""

    def time(self) -> float: ...

    def call_at(self, when: float, callback: Callable[..., object], *args: Any) -> Timer: ...


class Rerun:
    """An async job that runs again once if asked while running, instead of running twice at once."""

    def __init__(self, job: Callable[[], Awaitable[None]]) -> None:
        self._job = job
        self._dirty = False
        self._task: asyncio.Task[None] | None = None

    def trigger(self) -> None:
        self._dirty = True
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run())

    async def idle(self) -> None:
        """Wait for the job to settle; cancelling the job does not cancel the one who waits."""
        while self._task is not None and not self._task.done():
            await asyncio.wait({self._task})

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _run(self) -> None:
        while self._dirty:
            self._dirty = False
            try:
                await self._job()
            except Exception:
                logger.exception("%s failed", self._job)


class Coalescer:
    """At most one report per pane per interval: leading edge at once, trailing edge by timer."""

    def __init__(
        self, interval: float, report: Callable[[str, bool], None], clock: Clock | None = None
    ) -> None:
        self.interval = interval
        self._report = report
        self._clock = clock
        self._last: dict[str, float] = {}
        self._timers: dict[str, Timer] = {}
        self._resync: set[str] = set()

    @property
    def clock(self) -> Clock:
        """The clock handed in, else the running loop's (asked when needed, not at construction)."""
        return self._clock or asyncio.get_running_loop()

    def mark(self, pane: str, resync: bool = False) -> None:
        if resync:
            self._resync.add(pane)
        if pane in self._timers:
            return
        clock = self.clock
        due = self._last.get(pane, -math.inf) + self.interval
        if clock.time() >= due:
            self._fire(pane)
        else:
            self._timers[pane] = clock.call_at(due, self._fire, pane)

    def due(self, pane: str) -> bool:
        """Whether a trailing report for ``pane`` is already coming."""
        return pane in self._timers

    def forget(self, pane: str) -> None:
        timer = self._timers.pop(pane, None)
        if timer is not None:
            timer.cancel()
        self._last.pop(pane, None)
        self._resync.discard(pane)

    def close(self) -> None:
        for pane in list(self._timers):
            self.forget(pane)

    def _fire(self, pane: str) -> None:
        self._timers.pop(pane, None)
        self._last[pane] = self.clock.time()
        resync = pane in self._resync
        self._resync.discard(pane)
        self._report(pane, resync)
