"""A clock that moves only when a test says so, with timers that fire as it moves.

It offers what :mod:`roost.pane.tmux.pacing` and :mod:`roost.services.notify.delay` ask of the event loop
(``time``, ``call_at``, ``call_later``), so their tests step through an interval or a grace
exactly, instead of sleeping it out and hoping the machine kept up.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(order=True)
class Timer:
    when: float
    order: int
    callback: Callable[[], object] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        self.cancelled = True


class SteppedClock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now
        self._timers: list[Timer] = []
        self._order = itertools.count()

    def time(self) -> float:
        return self.now

    def call_at(self, when: float, callback: Callable[..., object], *args: Any) -> Timer:
        timer = Timer(when, next(self._order), lambda: callback(*args))
        heapq.heappush(self._timers, timer)
        return timer

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any) -> Timer:
        return self.call_at(self.now + delay, callback, *args)

    def advance(self, seconds: float) -> None:
        """Move time on by ``seconds``, running each timer that falls due on the way, in order
        and at its own moment (a timer set by one that fires runs too, if it falls due)."""
        end = self.now + seconds
        while self._timers and self._timers[0].when <= end:
            timer = heapq.heappop(self._timers)
            if not timer.cancelled:
                self.now = max(self.now, timer.when)
                timer.callback()
        self.now = end

    def pending(self) -> int:
        """Timers set and neither fired nor cancelled."""
        return sum(not timer.cancelled for timer in self._timers)
