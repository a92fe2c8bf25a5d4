"""A one-second grace per session before a notification goes out.

Walking over to the terminal (or opening the session in the web app) within that second
cancels it, so a phone does not buzz about something its owner is already looking at. A newer
transition of the same session replaces the pending one: one notification says the latest.

The grace is timed by a :class:`Clock` handed in: the running event loop unless a test hands
in one it steps by hand, so a test of the grace does not wait it out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

GRACE = 1.0


class Timer(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    """What the grace asks of time; an asyncio event loop is one."""

    def call_later(self, delay: float, callback: Callable[[], object]) -> Timer: ...


class Delays:
    """Pending notifications, at most one per session key, on the running event loop."""

    def __init__(self, seconds: float = GRACE, clock: Clock | None = None) -> None:
        self.seconds = seconds
        self._clock = clock
        self._pending: dict[str, Timer] = {}

    def schedule(self, key: str, fire: Callable[[], object]) -> None:
        self.cancel(key)

        def run() -> None:
            self._pending.pop(key, None)
            fire()

        clock = self._clock or asyncio.get_running_loop()
        self._pending[key] = clock.call_later(self.seconds, run)

    def cancel(self, key: str) -> bool:
        """Drop the pending notification of ``key``; whether there was one."""
        handle = self._pending.pop(key, None)
        if handle is None:
            return False
        handle.cancel()
        return True

    def pending(self, key: str) -> bool:
        return key in self._pending

    def close(self) -> None:
        for key in list(self._pending):
            self.cancel(key)
