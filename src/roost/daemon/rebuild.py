"""Rebuilding the roster on start, and keeping it current with a scan on a timer.

Nothing about status is persisted, so a daemon that starts (or restarts after ``kill -9``)
knows everything again after one pass: one ``list-panes -a`` on roost's tmux server (every
badged pane is a hook claim, its options being what the hooks last said) and one process
scan (every known agent, in a pane or outside tmux). Later passes claim only what changed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from roost.truth.detect.scan import Observation, Scanner
from roost.truth.detect.scanclaims import Reporter
from roost.truth.roster import records
from roost.truth.roster.live import Live

log = logging.getLogger("rosterd")


@dataclass(frozen=True)
class Rebuilt:
    """How the start-up rebuild went: what ``rosterd daemon`` reports and ``/status`` shows."""

    seconds: float
    sessions: int
    claims: int


class Observer:
    """Runs scan passes and feeds their claims to the live roster."""

    def __init__(self, scanner: Scanner, live: Live, reporter: Reporter | None = None) -> None:
        self.scanner = scanner
        self.live = live
        self.reporter = reporter or Reporter()

    def rebuild(self) -> Rebuilt:
        """The first pass, before the daemon serves anyone: the roster as the world is now."""
        began = time.perf_counter()
        claimed = self._apply(self.scanner.observe())
        sessions = sum(1 for r in self.live.roster.records() if r.liveness != records.ENDED)
        return Rebuilt(time.perf_counter() - began, sessions, claimed)

    async def once(self) -> int:
        """One later pass; the blocking part (tmux, /proc) runs off the event loop."""
        observation = await asyncio.to_thread(self.scanner.observe)
        return self._apply(observation)

    async def every(self, interval: float) -> None:
        """Pass after pass until cancelled; a failed pass is logged and the next one tried."""
        while True:
            await asyncio.sleep(interval)
            try:
                await self.once()
            except Exception:
                log.exception("scan pass failed")

    def _apply(self, observation: Observation) -> int:
        claims = self.reporter.claims(observation, self.live.roster)
        self.live.apply_all(claims)
        return len(claims)
