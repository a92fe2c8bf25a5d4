"""A pane's raw output through ``pipe-pane``: what browser terminals draw, at tmux's own cost.

A control client receives a pane's output as ``%output`` lines, for which tmux formats every
byte on its own and octal-escapes the control bytes: for a pane that floods, that costs tmux
more than parsing the output into the pane's grid, and the daemon as much again to undo it.
``pipe-pane -O`` hands the same bytes over raw. A :class:`Tap` is that pipe for one pane,
shared by every viewer of the pane in this process: tmux runs ``cat`` into a FIFO (in a private
directory) that the event loop reads. The shell opens the FIFO read-write first, which never
waits, so its write-only open finds a reader and never waits either: a ``sh`` that tmux started
just as the daemon died would otherwise wait in ``open`` for a reader that never comes, for good.

Lining a screen up with the stream. A pipe carries no notices, so nothing in it says where a
captured screen ends. A viewer that needs the screen (it just joined, it fell behind, the pane
changed size) asks the tap to *sync*: one command line re-opens the pipe, then captures. tmux
runs a line's commands back to back, reading no pane output in between, and starts a new pipe
at the first byte its grid has not parsed, so the new pipe begins exactly where the capture
ends. Re-opening drops what tmux had not yet written to the old pipe, so every viewer of the
tap is repainted from the capture, not only the one that asked, and whatever still arrives
through an older pipe is thrown away.

A pane has one pipe. A tap only replaces its own: a viewer that finds a pane piped by someone
else (a log) does not tap it (see :mod:`roost.pane.tmux.paneview`). When the pipe ends without the
tap closing it (the pane exited, someone piped it elsewhere, ``cat`` was killed), each viewer
hears ``tap_ended`` and finds out which. A tap whose last viewer leaves closes its pipe.
A daemon killed with taps open leaves each ``cat`` to die at its pane's next write (nobody
reads the FIFO) and tmux to close the pipe at the write after; until then the pane counts as
piped by someone else, and the next daemon's viewers of it read ``%output``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from roost.pane.tmux.controlclient import ControlClient, ControlClosed
from roost.pane.tmux.frames import Reset
from roost.pane.tmux.notifications import Reply
from roost.pane.tmux.server import TmuxError

READ_SIZE = 1 << 18
"""Bytes taken from a FIFO per wake-up: a flood arrives in a few large pieces."""

Painter = Callable[[list[Reply] | None], Reset | None]
"""Turns a sync's command replies into the repaint every viewer gets; None when it can't (the
pane is gone, or the screen changed mode under the capture): the asker deals with that."""


def pipe_command(fifo: Path) -> str:
    """The ``pipe-pane`` command that writes a pane's output into ``fifo``, escaped for tmux's
    format expansion. Opening read-write first is what keeps it from ever waiting in ``open``."""
    quoted = shlex.quote(str(fifo))
    return f"exec 3<>{quoted}; exec cat >{quoted} 3<&-".replace("#", "##").replace("%", "%%")


class Viewer(Protocol):
    """What a tap tells each viewer of its pane."""

    def tap_bytes(self, data: bytes) -> None:
        """Output, in order, after the last ``tap_synced``."""

    def tap_synced(self, frame: Reset) -> None:
        """Start again from this screen: output before it is in it."""

    def tap_ended(self) -> None:
        """The pipe ended without the tap closing it."""


class Taps:
    """Every tap of this process, by tmux server and pane, with the directory for their FIFOs."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._taps: dict[tuple[str, str], Tap] = {}
        self.opened = 0
        """Pipes opened so far: each sync opens one, so this is what syncs have cost tmux."""

    def sweep(self) -> None:
        """Remove FIFOs an earlier daemon left behind (killed before it could)."""
        with contextlib.suppress(OSError):
            for leftover in self.directory.iterdir():
                if not leftover.name.startswith(f"{os.getpid()}-"):
                    shutil.rmtree(leftover, ignore_errors=True)

    def tapped(self, socket: str, pane: str) -> bool:
        """Whether the pane's pipe is one of ours (a viewer may then join it)."""
        return (socket, pane) in self._taps

    async def join(self, socket: str, pane: str, viewer: Viewer) -> Tap:
        """The pane's tap, made if it has none, with ``viewer`` among its viewers; the viewer
        asks for a sync before it draws anything."""
        key = (socket, pane)
        tap = self._taps.get(key)
        if tap is not None and tap.stopping is not None:
            await asyncio.shield(tap.stopping)  # its pipe is being closed: start afresh after
            tap = self._taps.get(key)
        if tap is None:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            tap = Tap(self, key, pane)
            self._taps[key] = tap
        tap.viewers.append(viewer)
        return tap

    def fifo(self, pane: str) -> Path:
        """A fresh FIFO, alone in a fresh directory (see ``Tap._close``). Its path holds no
        ``%`` or ``#``, which tmux would expand in the pipe command."""
        self.opened += 1
        home = self.directory / f"{os.getpid()}-{pane.lstrip('%')}-{self.opened}"
        home.mkdir(mode=0o700)
        path = home / "out"
        os.mkfifo(path, 0o600)
        return path

    def _forget(self, tap: Tap) -> None:
        if self._taps.get(tap.key) is tap:
            del self._taps[tap.key]


class Tap:
    """One pane's pipe: ``sync`` to (re)open it, ``leave`` when a viewer goes."""

    def __init__(self, taps: Taps, key: tuple[str, str], pane: str) -> None:
        self.taps = taps
        self.key = key
        self.pane = pane
        self.viewers: list[Viewer] = []
        self.stopping: asyncio.Future[None] | None = None
        """Set while the last viewer closes the pipe; done once it is closed."""
        self._generation = 0
        self._fifos: dict[int, tuple[int, Path]] = {}
        """Each pipe's FIFO read end and path, kept until its cat has gone (EOF) or the tap ends."""
        self._waiting: list[bytes] | None = None
        self._loop = asyncio.get_running_loop()

    def sync(self, client: ControlClient, commands: Sequence[Sequence[str]], painter: Painter) -> None:
        """Re-open the pipe and run ``commands`` (the captures) on the same line; ``painter``
        turns their replies into the repaint every viewer gets, then the new pipe's bytes flow.
        Raises ControlClosed when ``client`` has ended."""
        generation, path = self._open()
        command = pipe_command(path)

        def settle(replies: list[Reply] | None) -> None:
            if generation != self._generation or self.stopping is not None:
                return  # a later sync (or the end) overtook this one
            piped = replies is not None and len(replies) == len(commands) + 1 and replies[0].ok
            frame = painter(replies[1:] if piped and replies is not None else None)
            if frame is None:
                return
            waiting, self._waiting = self._waiting or [], None
            for viewer in list(self.viewers):
                viewer.tap_synced(frame)
            for data in waiting:
                self._deliver(data)

        self._generation, self._waiting = generation, []
        try:
            client.ask_together(settle, ("pipe-pane", "-O", "-t", self.pane, command), *commands)
        except ControlClosed:
            self._close(generation)
            raise

    async def leave(self, viewer: Viewer, client: ControlClient | None) -> None:
        """``viewer`` is gone; the last one out closes the pipe through ``client``."""
        with contextlib.suppress(ValueError):
            self.viewers.remove(viewer)
        if self.viewers or self.stopping is not None:
            return
        self.stopping = self._loop.create_future()
        try:
            if client is not None and not client.closed:
                with contextlib.suppress(TmuxError, TimeoutError):
                    await asyncio.wait_for(client.command("pipe-pane", "-t", self.pane), 5)
        finally:
            for generation in list(self._fifos):
                self._close(generation)
            self.taps._forget(self)
            self.stopping.set_result(None)

    def drop(self, viewer: Viewer) -> None:
        """``viewer`` no longer reads this tap, whose pipe someone else has replaced."""
        with contextlib.suppress(ValueError):
            self.viewers.remove(viewer)
        if not self.viewers and self.stopping is None:
            for generation in list(self._fifos):
                self._close(generation)
            self.taps._forget(self)

    def _open(self) -> tuple[int, Path]:
        generation = self._generation + 1
        path = self.taps.fifo(self.pane)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        self._fifos[generation] = (fd, path)
        self._loop.add_reader(fd, self._readable, generation, fd)
        return generation, path

    def _readable(self, generation: int, fd: int) -> None:
        try:
            data = os.read(fd, READ_SIZE)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:  # cat exited: the pipe it served is closed
            self._close(generation)
            if generation == self._generation and self.stopping is None:
                for viewer in list(self.viewers):
                    viewer.tap_ended()
            return
        if generation != self._generation:
            return  # an older pipe's tail: the last repaint shows it
        if self._waiting is not None:
            self._waiting.append(data)
        else:
            self._deliver(data)

    def _deliver(self, data: bytes) -> None:
        for viewer in list(self.viewers):
            viewer.tap_bytes(data)

    def _close(self, generation: int) -> None:
        """Stop reading one pipe's FIFO and remove it, leaving no path a late cat could use.

        tmux starts the pipe's shell on its own time, so the shell may open the path after the
        tap is done with it. The FIFO's directory is renamed away first: until then the FIFO is
        there (cat starts, and goes at its first write or at the pipe's end), after it the path
        does not exist, so the redirection cannot create a file there. Either way the shell
        never waits in ``open`` (see the module's docstring)."""
        fifo = self._fifos.pop(generation, None)
        if fifo is None:
            return
        fd, path = fifo
        home = path.parent
        gone = home.with_name(home.name + ".gone")
        with contextlib.suppress(OSError):
            home.rename(gone)
        shutil.rmtree(gone, ignore_errors=True)
        self._loop.remove_reader(fd)
        os.close(fd)
