"""A viewer's queue of frames, bounded in bytes: a slow reader is repainted, never buffered for.

A browser that reads slower than its pane writes would otherwise hold the daemon's memory
hostage. Past ``backlog`` queued output bytes the queue drops its output and says it is
*behind*; the view then repaints the reader (a :class:`Reset`) once it reads again, and the
repaint ends being behind. Frames that are not output (a size, the end) are never dropped.
"""

from __future__ import annotations

import asyncio
from collections import deque

from roost.pane.tmux.frames import Bytes, Frame, Reset, Size


class FrameQueue:
    """Frames in order, the output bytes they hold, and whether output was dropped."""

    def __init__(self, backlog: int) -> None:
        self.backlog = backlog
        self.behind = False
        self.wake = asyncio.Event()
        self._frames: deque[Frame] = deque()
        self._queued = 0

    def __bool__(self) -> bool:
        return bool(self._frames)

    def push(self, frame: Frame) -> bool:
        """Queue ``frame``; True when this push made the reader fall behind."""
        if isinstance(frame, Reset):
            self.behind = False
        if isinstance(frame, Bytes | Reset):
            self._queued += len(frame.data)
        self._frames.append(frame)
        self.wake.set()
        if self._queued > self.backlog and not self.behind:
            self._drop(Bytes, Reset)
            self.behind = True
            return True
        return False

    def pop(self) -> Frame:
        frame = self._frames.popleft()
        if isinstance(frame, Bytes | Reset):
            self._queued -= len(frame.data)
        return frame

    def drain(self) -> list[Frame]:
        """Every frame queued, oldest first, leaving none."""
        frames = []
        while self._frames:
            frames.append(self.pop())
        return frames

    def start_over(self, frame: Reset) -> None:
        """A repaint that every queued output and size predates: they go, it is queued."""
        self._drop(Bytes, Reset, Size)
        self.push(frame)

    def _drop(self, *kinds: type) -> None:
        self._frames = deque(f for f in self._frames if not isinstance(f, kinds))
        self._queued = sum(len(f.data) for f in self._frames if isinstance(f, Bytes | Reset))
