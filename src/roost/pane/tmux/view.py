"""One viewer of one pane: its screen now, then its live output, in order, and its keys back.

A browser tab showing a pane is a :class:`PaneView`. Everything it takes to send one viewer
the right bytes at the right moment is this one concept, so it lives in this one module, in
the order a newcomer reads it: the frames a viewer receives, the repaint, the bounded queue,
the size asked of tmux, the viewer's control client, the shared pipe, and the view itself.

**Frames.** A viewer receives repaints (:class:`Reset`), output (:class:`Bytes`), size changes
(:class:`Size`) and the end (:class:`Closed`); a face (the terminal WebSocket) sends them on.

**The repaint** (:func:`paint`): a pane's screen, scrollback and terminal modes as the bytes
that redraw it on a blank terminal of the pane's exact size: its scrollback above, its screen
(the alternate screen too, the normal one saved behind it), the cursor where the pane's is,
and the input modes the program set (application cursor keys, keypad, mouse reporting). Pure:
no tmux call. tmux 3.3a cannot tell whether the program asked for bracketed paste, so a viewer
pastes through tmux (``paste-buffer -p``), which knows.

**The queue** (:class:`FrameQueue`) is bounded in bytes: a browser that reads slower than its
pane writes would otherwise hold the daemon's memory hostage. Past ``backlog`` queued output
bytes it drops its output and says it is *behind*; the view repaints the reader once it reads
again. Frames that are not output (a size, the end) are never dropped.

**The size** a view asks for is a window's: a window holds the pane, its border and any panes
beside it, so the window asked for is the pane wanted plus what surrounds the pane now. It is
asked twice: as the control client's own size, which the session's other windows take, and for
the pane's window.

**The client** (:class:`ViewClient`) is the watcher's control client (``ignore-size``) with one
thing more: a caller takes a command's reply in stream order, between the notifications around
it, which is what lets a captured screen and the live output after it line up exactly.

**The pipe** (:class:`Tap`, :class:`Taps`). A control client receives output as ``%output``
lines, for which tmux formats every byte on its own and octal-escapes control bytes: for a pane
that floods, that costs tmux more than parsing the output, and the daemon as much again to undo
it. ``pipe-pane -O`` hands the same bytes over raw. A tap is that pipe for one pane, shared by
its viewers in this process: tmux runs ``cat`` into a FIFO (in a private directory) that the
event loop reads. The shell opens the FIFO read-write first, which never waits, so its
write-only open never waits either (a ``sh`` started just as the daemon died would otherwise
wait for a reader for good). A pipe carries no notices, so nothing in it says where a captured
screen ends: a viewer that needs the screen asks the tap to *sync*, one command line that
re-opens the pipe and then captures. tmux runs a line's commands back to back, reading no pane
output in between, and starts the new pipe at the first byte its grid has not parsed, so the
pipe begins exactly where the capture ends. Re-opening drops what tmux had not yet written to
the old pipe, so every viewer of the tap is repainted from the capture, and whatever still
comes through an older pipe is thrown away. A pane has one pipe; a tap replaces only its own,
and a viewer that finds a pane piped by someone else (a log) reads ``%output`` instead. When
the pipe ends without the tap closing it, each viewer hears ``tap_ended``; a tap whose last
viewer leaves closes its pipe. A daemon killed with taps open leaves each ``cat`` to die at its
pane's next write and tmux to close the pipe at the write after.

**The view.** Each view is its own tmux control client attached to the pane's session, for the
notices that change the pane's size or end it, so nothing polls. Its output is *tapped* when
given :class:`Taps` (as the daemon does), or *streamed* as ``%output`` in order with the
client's replies when the pane is piped by someone else or no taps are given.

Sharing a pane (the design choice). A person at a terminal comes first; browsers share what is
left. Each view's client is flagged ``ignore-size``, which tmux 3.3a leaves out of every size
decision while any other client is attached: the window keeps the size that person's terminal
gives it. When nobody is attached, the views decide: each asks for its pane's window
(``refresh-client -C @WINDOW:COLSxROWS``) and tmux never makes a window larger than any such
request, so a window viewed from several browsers is as large as the smallest allows. When a
client detaches, every view asks again, so a window grows back at once. Every view draws the
pane at the size tmux gave it, told by a :class:`Size` frame, so output lands where the
program meant it; a browser whose box differs letterboxes or scrolls.

Order, streamed. Replies and notifications share one stream, so a screen captured by a command
shows exactly the output before its reply: output before is dropped (it is in the capture),
output after follows the :class:`Reset`. Output after a layout change waits for the pane's new
size. A viewer that falls behind by more than ``backlog`` bytes (either way) loses the queued
output and, once it reads again, gets a fresh :class:`Reset` (at most one per ``CATCH_UP``),
and so does one tmux paused (``pause-after``).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import shlex
import shutil
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from roost.pane.tmux import paste
from roost.pane.tmux.controlclient import ControlClient, ControlClosed, Event, Resync, ignore
from roost.pane.tmux.notifications import (
    ClientDetached,
    LayoutChange,
    Output,
    Reply,
    SessionChanged,
    UnlinkedWindowClose,
    WindowClose,
)
from roost.pane.tmux.server import SEP, PaneGone, Server, TmuxError, fields


@dataclass(frozen=True, slots=True)
class Reset:
    """Clear the terminal, resize it to ``cols`` x ``rows``, then write ``data``."""

    cols: int
    rows: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Bytes:
    """Live output, to write as it is."""

    data: bytes


@dataclass(frozen=True, slots=True)
class Size:
    """The pane is now ``cols`` x ``rows``: resize the terminal before writing more."""

    cols: int
    rows: int


@dataclass(frozen=True, slots=True)
class Closed:
    """The view ended; ``reason`` says why in a person's words."""

    reason: str


Frame = Reset | Bytes | Size | Closed


NAMES = (
    "pane_id",
    "pane_dead",
    "pane_pipe",
    "session_id",
    "window_id",
    "window_panes",
    "window_width",
    "window_height",
    "pane_width",
    "pane_height",
    "history_size",
    "cursor_x",
    "cursor_y",
    "cursor_flag",
    "alternate_on",
    "alternate_saved_x",
    "alternate_saved_y",
    "keypad_cursor_flag",
    "keypad_flag",
    "insert_flag",
    "wrap_flag",
    "scroll_region_upper",
    "scroll_region_lower",
    "mouse_standard_flag",
    "mouse_button_flag",
    "mouse_any_flag",
    "mouse_utf8_flag",
    "mouse_sgr_flag",
)

FORMAT = SEP.join(f"#{{{name}}}" for name in NAMES)

"""One ``display-message -p`` line holding everything :class:`PaneState` reads."""

ROW_SEP = b"\r\n"

RESET_ATTRS = b"\x1b[0m"

ENTER_ALTERNATE = b"\x1b[?1049h\x1b[H\x1b[2J"


@dataclass(frozen=True)
class PaneState:
    """Where a pane is and what mode its terminal is in, from one ``display-message`` line."""

    pane: str
    dead: bool
    piped: bool
    """Someone's ``pipe-pane`` is open on the pane (a tap's own, or a log's)."""
    session: str
    window: str
    window_panes: int
    window_size: tuple[int, int]
    size: tuple[int, int]
    history: int
    cursor: tuple[int, int]
    cursor_visible: bool
    alternate: bool
    alternate_saved: tuple[int, int] | None
    wrap: bool
    modes: tuple[str, ...]
    scroll_region: tuple[int, int]

    @classmethod
    def parse(cls, line: str) -> PaneState:
        """Raises ValueError when the line is not a FORMAT line (a pane id first)."""
        value = dict(zip(NAMES, fields(line, len(NAMES)), strict=True))
        if not value["pane_id"].startswith("%"):
            raise ValueError(f"not a pane state line: {line!r}")

        def number(name: str) -> int:
            return int(value[name] or 0)

        saved = (number("alternate_saved_x"), number("alternate_saved_y"))
        return cls(
            pane=value["pane_id"],
            dead=value["pane_dead"] == "1",
            piped=value["pane_pipe"] == "1",
            session=value["session_id"],
            window=value["window_id"],
            window_panes=number("window_panes"),
            window_size=(number("window_width"), number("window_height")),
            size=(number("pane_width"), number("pane_height")),
            history=number("history_size"),
            cursor=(number("cursor_x"), number("cursor_y")),
            cursor_visible=value["cursor_flag"] != "0",
            alternate=value["alternate_on"] == "1",
            # tmux says 4294967295 (-1 as unsigned) when nothing is saved.
            alternate_saved=saved if max(saved) < 1 << 31 else None,
            wrap=value["wrap_flag"] != "0",
            modes=tuple(name for name, _ in _MODES if value[name] == "1"),
            scroll_region=(number("scroll_region_upper"), number("scroll_region_lower")),
        )


_MODES = (
    ("keypad_cursor_flag", b"\x1b[?1h"),
    ("keypad_flag", b"\x1b="),
    ("insert_flag", b"\x1b[4h"),
    ("mouse_standard_flag", b"\x1b[?1000h"),
    ("mouse_button_flag", b"\x1b[?1002h"),
    ("mouse_any_flag", b"\x1b[?1003h"),
    ("mouse_utf8_flag", b"\x1b[?1005h"),
    ("mouse_sgr_flag", b"\x1b[?1006h"),
)

_MODE_BYTES = dict(_MODES)


def _goto(x: int, y: int) -> bytes:
    return f"\x1b[{y + 1};{x + 1}H".encode()


def paint(state: PaneState, main: Sequence[bytes], alternate: Sequence[bytes] | None = None) -> bytes:
    """The bytes that redraw the pane on a blank terminal of ``state.size``.

    ``main`` is the normal screen's scrollback then its rows (``capture-pane -p -e -S -N``; when
    a full-screen program runs, the history then the saved normal screen, ``capture-pane -a``);
    ``alternate`` is the full-screen program's rows (``capture-pane -p -e``), or None.
    """
    out = bytearray(ROW_SEP.join(main))
    out += RESET_ATTRS
    if alternate is not None:
        if state.alternate_saved is not None:
            out += _goto(*state.alternate_saved)
        out += ENTER_ALTERNATE + ROW_SEP.join(alternate) + RESET_ATTRS
    upper, lower = state.scroll_region
    if (upper, lower) != (0, max(0, state.size[1] - 1)):
        out += f"\x1b[{upper + 1};{lower + 1}r".encode()
    if not state.wrap:
        out += b"\x1b[?7l"
    for name in state.modes:
        out += _MODE_BYTES[name]
    out += _goto(*state.cursor)
    if not state.cursor_visible:
        out += b"\x1b[?25l"
    return bytes(out)


def captures(pane: str, state: PaneState, history: int) -> list[tuple[str, ...]]:
    """The commands whose replies :func:`painted` needs, in order, the state read last.

    Normal screen: its scrollback and rows. Full-screen program: the history, the normal
    screen saved behind the program, then the program's screen."""
    target = ("-p", "-e", "-t", pane)
    lines = ("-S", f"-{history}")
    if not state.alternate:
        commands = [("capture-pane", *target, *lines)]
    else:
        commands = [("capture-pane", *target, *lines, "-E", "-1")] if state.history else []
        commands += [("capture-pane", *target, "-a", "-q"), ("capture-pane", *target)]
    commands.append(("display-message", "-p", "-t", pane, FORMAT))
    return commands


def painted(state: PaneState, captured: Sequence[Sequence[bytes]]) -> bytes:
    """The repaint from the rows :func:`captures` brought back for a pane now in ``state``."""
    if state.alternate:
        return paint(state, [line for lines in captured[:-1] for line in lines], captured[-1])
    return paint(state, captured[0])


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


MAX_SIZE = 10_000

"""tmux's largest window, in columns or rows."""


def check(cols: int, rows: int) -> tuple[int, int]:
    """``(cols, rows)``, or ValueError when no terminal is that size."""
    if not (0 < cols <= MAX_SIZE and 0 < rows <= MAX_SIZE):
        raise ValueError(f"{cols}x{rows} is not a terminal size")
    return cols, rows


def window_for(wanted: tuple[int, int], state: PaneState) -> tuple[int, int]:
    """The window size that makes the pane ``wanted``, within tmux's largest."""
    extra_x = max(0, state.window_size[0] - state.size[0])
    extra_y = max(0, state.window_size[1] - state.size[1])
    return min(MAX_SIZE, wanted[0] + extra_x), min(MAX_SIZE, wanted[1] + extra_y)


def commands(wanted: tuple[int, int] | None, state: PaneState | None) -> list[tuple[str, ...]]:
    """The two ``refresh-client -C`` requests for ``wanted``; none before a size is wanted."""
    if wanted is None or state is None:
        return []
    cols, rows = window_for(wanted, state)
    size = f"{cols}x{rows}"
    return [("refresh-client", "-C", size), ("refresh-client", "-C", f"{state.window}:{size}")]


Settle = Callable[[Reply | None], None]


class ViewClient(ControlClient):
    """A control client whose replies a caller can take in stream order, between the
    notifications around them. It stands for a person with the pane open in a browser, so it
    counts among a session's attached clients where the daemon's watcher does not."""

    TERM = "roost-view"

    def ask(self, settle: Settle, *args: str) -> None:
        """Send one command; ``settle`` runs as its reply is read (None: the client ended)."""
        self._send(args, settle)


def where(server: Server, pane: str) -> PaneState:
    """The pane's state now, by a one-off tmux call; PaneGone when there is no such pane."""
    if not (pane.startswith("%") and pane[1:].isdigit()):
        raise PaneGone(f"{pane!r} is not a pane id (%N)")
    proc = server.run("display-message", "-p", "-t", pane, FORMAT, check=False)
    try:
        state = PaneState.parse(proc.stdout.decode(errors="replace").rstrip("\n"))
    except ValueError:
        raise PaneGone(f"no pane {pane}") from None
    if proc.returncode != 0 or state.pane != pane:
        raise PaneGone(f"no pane {pane}")
    if state.dead:
        raise PaneGone(f"pane {pane} has exited")
    return state


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


HISTORY = 2000

"""Scrollback lines a new view is painted with."""

BACKLOG = 1 << 20

"""Output bytes queued for a slow viewer before it is repainted instead."""

KEYS_PER_COMMAND = 512

"""Bytes per ``send-keys -H``: one command line stays short however much is typed."""

CATCH_UP = 0.25

"""Seconds at least between two repaints of a viewer that keeps falling behind."""

_turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)


def _one_at_a_time(server: Server) -> asyncio.Lock:
    """The lock a view holds while its client attaches or detaches, one per tmux server.

    tmux 3.3a's server crashes, taking every session with it, when several control clients
    that asked for a window's size attach and detach at the same moment (a burst of browser
    tabs opening a busy pane did it about three times in four). One at a time it never did, and
    an attach costs tens of milliseconds, so a burst of views opens a little later instead.
    """
    locks = _turns.setdefault(asyncio.get_running_loop(), {})
    return locks.setdefault(server.socket, asyncio.Lock())


class PaneView:
    """``await open()``, then ``await next()`` frame after frame until :class:`Closed`."""

    def __init__(
        self,
        server: Server,
        pane: str,
        *,
        history: int = HISTORY,
        backlog: int = BACKLOG,
        taps: Taps | None = None,
    ) -> None:
        self.server = server
        self.pane = pane
        self.history = history
        self.backlog = backlog
        self.taps = taps
        self.state: PaneState | None = None
        self._client: ViewClient | None = None
        self._tap: Tap | None = None
        self._frames = FrameQueue(backlog)
        self._painting = 0
        self._reading = False
        self._caught_up = -math.inf
        self._catch_up_timer: asyncio.TimerHandle | None = None
        self._held: list[bytes] | None = None
        self._holds = 0
        self._wanted: tuple[int, int] | None = None
        self._closed: Closed | None = None
        self._ending: asyncio.Task[None] | None = None

    async def open(self, cols: int | None = None, rows: int | None = None) -> None:
        """Attach, size the window if a size is given, and queue the first :class:`Reset`."""
        async with _one_at_a_time(self.server):
            await self._open(cols, rows)

    async def _open(self, cols: int | None, rows: int | None) -> None:
        self.state = await asyncio.to_thread(where, self.server, self.pane)
        taps = self.taps
        tapping = taps is not None and (not self.state.piped or taps.tapped(self.server.socket, self.pane))
        self._client = ViewClient(self.server, self.state.session, self._on_event, output=not tapping)
        try:
            await self._client.start()
        except ControlClosed:
            raise PaneGone(f"no pane {self.pane}") from None
        self._ending = asyncio.create_task(self._watch_end(self._client))
        if tapping and taps is not None:
            self._tap = await taps.join(self.server.socket, self.pane, self)
        if cols is not None and rows is not None:
            with contextlib.suppress(TmuxError):  # the size is asked for again on the next resize
                await self.resize(cols, rows)
        self._paint()

    async def next(self) -> Frame:
        """The next frame; after :class:`Closed`, :class:`Closed` again."""
        while not self._frames:
            if self._closed is not None:
                return self._closed
            self._frames.wake.clear()
            self._reading = True
            self._catch_up()
            try:
                await self._frames.wake.wait()
            finally:
                self._reading = False
        return self._frames.pop()

    def pending(self) -> list[Frame]:
        """Every frame already queued, without waiting (to batch output into one message)."""
        return self._frames.drain()

    async def write(self, data: bytes) -> None:
        """Keys, as typed: the bytes reach the pane's program unchanged."""
        client = self._live()
        for start in range(0, len(data), KEYS_PER_COMMAND):
            chunk = data[start : start + KEYS_PER_COMMAND]
            await client.command("send-keys", "-t", self.pane, "-H", *(f"{byte:02x}" for byte in chunk))

    async def paste(self, data: bytes) -> None:
        """A paste: bracketed when the program asked for it (tmux knows, a viewer cannot)."""
        self._live()
        clean = paste.clean(data)
        if not clean:
            return
        proc = await asyncio.to_thread(paste.paste_once, self.server, self.pane, clean, raw=True)
        if proc.returncode != 0:
            raise TmuxError(proc.stderr.decode(errors="replace").strip() or "paste failed")

    async def resize(self, cols: int, rows: int) -> None:
        """Ask for the pane to be ``cols`` x ``rows``; a :class:`Size` frame says what it became."""
        self._wanted = check(cols, rows)
        client = self._live()
        for command in commands(self._wanted, self.state):
            await client.command(*command)

    async def close(self) -> None:
        """Detach this view's client; the pane and its other viewers are untouched."""
        self._end("the view was closed")
        async with _one_at_a_time(self.server):
            await self._detach()

    async def _detach(self) -> None:
        if self._tap is not None:
            tap, self._tap = self._tap, None
            await tap.leave(self, self._client)
        if self._client is not None:
            await self._client.close()
        if self._ending is not None:
            self._ending.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ending

    def _live(self) -> ViewClient:
        if self._client is None or self._closed is not None:
            raise PaneGone(self._closed.reason if self._closed else "the view is not open")
        return self._client

    def _ask_again(self) -> None:
        """Repeat the size request from the stream: a window that is nobody's current one is
        otherwise resized only when next shown, so one viewer leaving would not let it grow."""
        client = self._client
        if client is None:
            return
        with contextlib.suppress(ControlClosed):
            for command in commands(self._wanted, self.state):
                client.ask(ignore, *command)

    # The stream: everything below runs from the control client's reader, in stream order.

    def _on_event(self, event: Event) -> None:
        if self._closed is not None:
            return
        state = self.state
        if isinstance(event, Output):
            if event.pane == self.pane and not self._painting:
                self._output(event.data)
        elif isinstance(event, Resync):
            if event.pane == self.pane:
                self._paint()
        elif isinstance(event, LayoutChange):
            if state is not None and (event.window == state.window or self.pane in event.panes):
                self._check()
        elif isinstance(event, WindowClose | UnlinkedWindowClose):
            if state is not None and event.window == state.window:
                self._check()
        elif isinstance(event, SessionChanged) and state is not None and event.session != state.session:
            self._check()
        elif isinstance(event, ClientDetached):
            self._ask_again()

    def _output(self, data: bytes) -> None:
        if self._frames.behind:
            return  # the repaint that ends it shows this
        if self._held is not None:
            self._held.append(data)
        else:
            self._push(Bytes(data))

    def _push(self, frame: Frame) -> None:
        if self._frames.push(frame):
            self._catch_up()

    def _catch_up(self) -> None:
        """Repaint a viewer that fell behind once it reads again, at most every ``CATCH_UP``
        seconds: a reader that is stuck (a stalled browser) costs nothing, and one slower than
        the pane a repaint per interval, however fast the pane writes."""
        if not (self._frames.behind and self._reading) or self._painting or self._catch_up_timer is not None:
            return
        loop = asyncio.get_running_loop()
        wait = self._caught_up + CATCH_UP - loop.time()
        if wait > 0:
            self._catch_up_timer = loop.call_later(wait, self._catch_up_due)
            return
        self._caught_up = loop.time()
        self._paint()

    def _catch_up_due(self) -> None:
        self._catch_up_timer = None
        self._catch_up()

    def _paint(self) -> None:
        """Capture scrollback, screens and state in order; queue a Reset when the last arrives.

        Tapped, the captures go on the line that re-opens the pipe (see the pipe, in this module's docstring)
        and the Reset comes back through ``tap_synced``, for every viewer of the pane."""
        client = self._client
        state = self.state
        if client is None or state is None:
            return
        alternate = state.alternate
        commands = captures(self.pane, state, self.history)
        self._painting += 1
        if self._tap is not None:
            try:
                self._tap.sync(client, commands, lambda replies: self._synced(replies, alternate))
            except ControlClosed:
                self._painting -= 1
            return
        replies: list[Reply | None] = []

        def capture(reply: Reply | None) -> None:
            replies.append(reply)

        def done(reply: Reply | None) -> None:
            self._painting -= 1
            frame = self._screen([*replies, reply], alternate)
            if frame is not None:
                self._push(frame)

        try:
            for command in commands[:-1]:
                client.ask(capture, *command)
            client.ask(done, *commands[-1])
        except ControlClosed:
            self._painting -= 1

    def _synced(self, replies: list[Reply] | None, alternate: bool) -> Reset | None:
        """A tap's sync answered: the repaint for every viewer, or None (this view copes)."""
        if replies is None:
            self._painting = 0
            self._gone(None)
            return None
        return self._screen(list(replies), alternate)

    def _screen(self, replies: list[Reply | None], alternate: bool) -> Reset | None:
        """The paint the captures make with the state read after them; None when the pane is
        gone (the view ends) or switched screens meanwhile (it is captured again)."""
        state = self._read_state(replies[-1])
        captured = [reply.lines if reply is not None and reply.ok else None for reply in replies[:-1]]
        if state is None or state.dead or any(lines is None for lines in captured):
            self._gone(state)
            return None
        self.state = state
        if state.alternate != alternate:
            # A full-screen program started or ended since the last look: capture the right screens.
            self._paint()
            return None
        return Reset(state.size[0], state.size[1], painted(state, [lines or () for lines in captured]))

    # What the tap says (see :class:`Viewer`).

    def tap_bytes(self, data: bytes) -> None:
        if self._closed is None:
            self._output(data)

    def tap_synced(self, frame: Reset) -> None:
        """Start over from ``frame``: queued output and sizes are older than it."""
        if self._closed is not None:
            return
        self._painting = 0
        self._frames.start_over(frame)

    def tap_ended(self) -> None:
        """The pipe closed under us: the pane exited, someone piped it elsewhere, or cat died."""
        client = self._client
        if client is None or self._closed is not None:
            return
        with contextlib.suppress(ControlClosed):
            client.ask(self._after_tap, "display-message", "-p", "-t", self.pane, FORMAT)

    def _after_tap(self, reply: Reply | None) -> None:
        state = self._read_state(reply)
        client, tap = self._client, self._tap
        if state is None or state.dead:
            self._gone(state)
        elif state.piped and tap is not None and client is not None:
            # Someone else's pipe-pane (a log): leave it be and read %output instead.
            self._tap = None
            tap.drop(self)
            with contextlib.suppress(ControlClosed):
                client.ask(ignore, "refresh-client", "-f", "!no-output")
            self._paint()
        else:
            self._paint()  # nothing pipes the pane now: open ours again

    def _check(self) -> None:
        """Re-read the pane after a notice that may have resized, moved or closed it; output
        that arrives meanwhile waits, so it is drawn at the size it was written for."""
        client = self._client
        if client is None:
            return
        self._holds += 1
        if self._held is None:
            self._held = []
        try:
            client.ask(self._checked, "display-message", "-p", "-t", self.pane, FORMAT)
        except ControlClosed:
            self._release()

    def _checked(self, reply: Reply | None) -> None:
        state = self._read_state(reply)
        before = self.state
        if state is None or state.dead:
            self._release()
            self._gone(state)
            return
        self.state = state
        if before is not None and state.size != before.size:
            if self._tap is not None:
                self._paint()  # a pipe's bytes may already be the new size's: repaint, exactly
            else:
                self._push(Size(*state.size))
        if before is not None and state.session != before.session and self._client is not None:
            # The pane moved to another session: follow it, or its output stops flowing here.
            with contextlib.suppress(ControlClosed):
                self._client.ask(ignore, "switch-client", "-t", state.session)
        if before is not None and state.window != before.window:
            self._ask_again()  # the size asked for was the old window's
        self._release()

    def _release(self) -> None:
        self._holds -= 1
        if self._holds > 0 or self._held is None:
            return
        held, self._held = self._held, None
        if held:
            self._push(Bytes(b"".join(held)))

    def _read_state(self, reply: Reply | None) -> PaneState | None:
        if reply is None or not reply.ok or not reply.lines:
            return None
        try:
            state = PaneState.parse(reply.lines[-1].decode(errors="replace"))
        except ValueError:
            return None
        return state if state.pane == self.pane else None

    def _gone(self, state: PaneState | None) -> None:
        self._end(f"pane {self.pane} has exited" if state is not None else f"pane {self.pane} closed")

    def _end(self, reason: str) -> None:
        if self._catch_up_timer is not None:
            self._catch_up_timer.cancel()
            self._catch_up_timer = None
        if self._closed is None:
            self._closed = Closed(reason)
            self._frames.wake.set()

    async def _watch_end(self, client: ViewClient) -> None:
        """The client ended on its own: the session went away, or tmux did."""
        await client.wait_closed()
        if self._closed is None:
            exists = await asyncio.to_thread(_exists, self.server, self.pane)
            self._end("tmux detached this view" if exists else f"pane {self.pane} closed")


def _exists(server: Server, pane: str) -> bool:
    try:
        where(server, pane)
    except PaneGone:
        return False
    return True
