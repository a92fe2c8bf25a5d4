"""One viewer of one pane: its screen now, then its live output, in order, and its keys back.

A browser tab showing a pane is a :class:`PaneView`. Its parts each live in their own module:
the bounded frame queue (:mod:`roost.pane.tmux.viewqueue`), the size it asks tmux for
(:mod:`roost.pane.tmux.viewsize`), the repaint (:mod:`roost.pane.tmux.paint`) and the shared pipe
(:mod:`roost.pane.tmux.tap`); this module holds the view's life and the stream's order. Those two
are one concept, what one viewer is sent and when: opening, a resize, a repaint, falling
behind and the pane's end each decide where the next frame goes in that stream, through the
same queue and state, so the module stays whole past ~400 lines.

Each view is its own tmux control client (``tmux -C``) attached to the pane's session, for
the notices that change the pane's size or end it, so nothing needs polling. Its output comes one of two ways:

- *tapped* (given :class:`~roost.pane.tmux.tap.Taps`, as the daemon does): raw, through the pane's
  ``pipe-pane`` shared by its viewers, and the client asks for no ``%output`` at all. tmux
  formats each ``%output`` byte one at a time; for a flood the pipe costs tmux less than a
  third as much and the daemon nothing to decode. See :mod:`roost.pane.tmux.tap` for how a screen
  lines up with the pipe: every repaint is a :class:`Reset` for all the pane's viewers, and a
  size change is a repaint.
- *streamed*, when the pane is piped by someone else (a log) or no taps are given: as
  ``%output`` in the client's own stream, in order with the replies, as below.

Sharing a pane (the design choice). A person at a terminal comes first; browsers share what
is left. Each view is a control client flagged ``ignore-size``, which tmux 3.3a leaves out of
every size decision while any other client (a person in ``tmux attach``) is attached: then the
window keeps the size that person's terminal gives it, and no browser can shrink or grow it
under them. When nobody is attached, the views decide: each asks for its pane's window
(``refresh-client -C @WINDOW:COLSxROWS``) and tmux never lets a window be larger than any
such request, so a window viewed from several browsers is as large as the smallest allows
(everyone sees the whole pane). A view also gives its size as its client's own, which is what
the session's other windows take, as they would for a person attaching from a terminal of
that size. When a client detaches, every view asks again, so a window grows back at once.
Every view draws the pane at the size tmux gave it, told by a :class:`Size` frame, so output
always lands where the program meant it; a browser whose box is larger or smaller than the
pane letterboxes or scrolls.

Order, streamed. Replies and notifications share one stream, so a screen captured by a
command shows exactly the output that came before its reply: output before is dropped (it is
in the capture), output after follows the :class:`Reset` frame. Output after a layout change
waits for the pane's new size, so it is never drawn at the old one. A viewer that falls behind
by more than ``backlog`` bytes (either way) loses the queued output and, once it reads again,
gets a fresh :class:`Reset` (at most one per ``CATCH_UP``), and so does one tmux paused
(``pause-after``).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import weakref

from roost.pane.tmux import paste, viewsize
from roost.pane.tmux.controlclient import ControlClosed, Event, Resync, ignore
from roost.pane.tmux.frames import Bytes, Closed, Frame, Reset, Size
from roost.pane.tmux.notifications import (
    ClientDetached,
    LayoutChange,
    Output,
    Reply,
    SessionChanged,
    UnlinkedWindowClose,
    WindowClose,
)
from roost.pane.tmux.paint import FORMAT, PaneState, captures, painted
from roost.pane.tmux.server import PaneGone, Server, TmuxError
from roost.pane.tmux.tap import Tap, Taps
from roost.pane.tmux.viewclient import ViewClient, where
from roost.pane.tmux.viewqueue import FrameQueue

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
        self._wanted = viewsize.check(cols, rows)
        client = self._live()
        for command in viewsize.commands(self._wanted, self.state):
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
            for command in viewsize.commands(self._wanted, self.state):
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

        Tapped, the captures go on the line that re-opens the pipe (see :mod:`roost.pane.tmux.tap`)
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

    # What the tap says (see roost.pane.tmux.tap.Viewer).

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
