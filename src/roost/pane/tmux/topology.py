"""When the panes, windows or sessions of roost's tmux server change: a version and a wake-up.

The web page lists every terminal (``GET /terminals``), but the roster's change stream speaks
only of sessions something claimed: a plain shell opening, closing or being renamed is not in
it, so a page following only the roster keeps a closed shell's row, and misses a pane split
from a terminal. The screen watcher already hears tmux's notices for these; it bumps the
version here, and a page's ``GET /changes?terminals=1`` stream tells it to list again.

Boundaries, as sentences:
- A version, not a diff: a page reads the whole list again (one ``list-panes``), so a burst
  of notices costs each page one read, however many arrived.
- Nothing is kept per watcher but the version it last saw.
"""

from __future__ import annotations

import asyncio
import contextlib


class Watch:
    """One subscriber: wakes when the version moved past what it last saw."""

    def __init__(self, topology: Topology) -> None:
        self._topology = topology
        self.seen = topology.version

    async def next(self, timeout: float, gather: float = 0.0) -> int | None:
        """The version after at most ``timeout`` seconds (unchanged: nothing happened), or None
        once the daemon is stopping. After a change, waits ``gather`` seconds more, so the rest
        of a burst arrives in the same version."""
        topology = self._topology
        if topology.version == self.seen and not topology.closed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(topology.changed.wait(), timeout)
            if topology.version != self.seen and gather > 0:
                await asyncio.sleep(gather)
        if topology.closed:
            return None
        self.seen = topology.version
        return self.seen


class Topology:
    """The tmux server's structure version, bumped by the watcher, watched by web pages."""

    def __init__(self) -> None:
        self.version = 0
        self.closed = False
        self.changed = asyncio.Event()

    def bump(self) -> None:
        self.version += 1
        self._wake()

    def watch(self) -> Watch:
        return Watch(self)

    def close(self) -> None:
        """End every watch: the daemon is stopping."""
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        # Each waiter holds the event it waited on; a fresh one is the next round's.
        self.changed.set()
        self.changed = asyncio.Event()
