"""A one-second grace per session before a notification goes out.

Walking over to the terminal (or opening the session in the web app) within that second
cancels it, so a phone does not buzz about something its owner is already looking at. A newer
transition of the same session replaces the pending one: one notification says the latest.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

GRACE = 1.0


class Delays:
    """Pending notifications, at most one per session key, on the running event loop."""

    def __init__(self, seconds: float = GRACE) -> None:
        self.seconds = seconds
        self._pending: dict[str, asyncio.TimerHandle] = {}

    def schedule(self, key: str, fire: Callable[[], object]) -> None:
        self.cancel(key)

        def run() -> None:
            self._pending.pop(key, None)
            fire()

        self._pending[key] = asyncio.get_running_loop().call_later(self.seconds, run)

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
