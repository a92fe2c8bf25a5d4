"""At most one line per kind per minute from the HTTP server's log, with a count of the rest.

uvicorn writes a line to the daemon's log for every request it refuses (a WebSocket upgrade
answered with a denial, a request that is not HTTP), and any local process can send as many of
those as it likes: unlimited, they would grow the log without bound. A kind is a line's
template, so different failures still each get their first line.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

WINDOW = 60.0
"""Seconds after a line in which more of its kind are only counted."""


class OnePerWindow(logging.Filter):
    """Lets a line through when none of its kind passed in the last ``window`` seconds; the one
    that next gets through says how many were held back meanwhile."""

    def __init__(self, window: float = WINDOW, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.window = window
        self.clock = clock
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        kind = str(record.msg)
        now = self.clock()
        last = self._last.get(kind)
        if last is not None and now - last < self.window:
            self._held[kind] = self._held.get(kind, 0) + 1
            return False
        self._last[kind] = now
        held = self._held.pop(kind, 0)
        if held:
            record.msg = f"{kind} ({held} more like it in the {self.window:.0f} s before were not logged)"
        return True


def limit(logger: logging.Logger) -> None:
    """Rate-limit ``logger``'s lines; a second call changes nothing."""
    if not any(isinstance(f, OnePerWindow) for f in logger.filters):
        logger.addFilter(OnePerWindow())
