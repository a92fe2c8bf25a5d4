"""One ``tmux -C`` client attached to one session, driven from asyncio.

tmux 3.3a sends ``%output`` only for panes in the session a control client is attached to,
so a caller that watches several sessions runs one of these per session (see ``watch``).

Boundaries, as sentences:
- The client only reads and asks: it attaches with ``-E`` (the daemon's environment never
  leaks into the session) and ``ignore-size`` (it never resizes a window).
- One command per line; replies are matched to commands first in, first out, counting only
  reply blocks tmux marks as the client's own (flag 1), never those of hooks it triggers.
- Nothing blocks the event loop: a task reads the process's stdout, writes are buffered by
  the pipe transport, and a slow reader costs a pane resync, never a stalled tmux.
- With ``pause_after`` set, tmux drops a pane's output once this client is that many seconds
  behind (``%pause``); the client continues the pane at once and captures its screen, so a
  reader gets ``Continue`` then ``Resync`` instead of a silent gap.
- A caller that only needs to know *that* a pane wrote can ``hold`` it: tmux then skips that
  pane's output for this client instead of encoding every byte of it, until ``release``.
  The pane keeps running at full speed (a paused pane never stops tmux reading it).

Measured on tmux 3.3a: ``respawn-pane -k`` on a pane that is writing while a control client
is attached to its session crashes the tmux server (fixed upstream after 3.3a, GitHub issue
5498). Nothing may respawn a busy pane while a control client runs; start a new pane.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from roost.pane.tmux.control import Parser
from roost.pane.tmux.notifications import Continue, Exit, Notification, Pause, Reply, SessionChanged
from roost.pane.tmux.panes import DAEMON_TERM
from roost.pane.tmux.server import Server, TmuxError, environment

logger = logging.getLogger(__name__)

READ_SIZE = 1 << 16


class ControlClosed(TmuxError):
    """The control client ended (session gone, server gone, closed) before answering."""


@dataclass(frozen=True, slots=True)
class Resync:
    """A paused pane's whole screen (``capture-pane -p -e``) after it continued: replace, don't append."""

    pane: str
    screen: bytes


Event = Notification | Resync
Handler = Callable[[Event], None]
_Settle = Callable[[Reply | None], None]
_Together = Callable[[list[Reply] | None], None]


class _Waiting:
    """A sent line waiting for its replies: one per command, up to the first that failed
    (tmux drops the rest of a line after a failure)."""

    __slots__ = ("replies", "settle", "size")

    def __init__(self, size: int, settle: _Together) -> None:
        self.size = size
        self.settle = settle
        self.replies: list[Reply] = []

    def take(self, reply: Reply | None) -> bool:
        """Note one reply (None: the client ended); True once the line is answered."""
        if reply is None:
            self.settle(None)
            return True
        self.replies.append(reply)
        if reply.ok and len(self.replies) < self.size:
            return False
        self.settle(self.replies)
        return True


def quote(arg: str) -> str:
    """One argument for tmux's command parser, single-quoted so nothing in it is special."""
    if "\n" in arg:
        raise ValueError("a control-mode command cannot contain a newline")
    return "'" + arg.replace("'", "'\\''") + "'"


class ControlClient:
    """``await start()``, then ``await command(...)``; every notification goes to ``on_event``."""

    def __init__(
        self,
        server: Server,
        session: str,
        on_event: Handler | None = None,
        *,
        pause_after: int | None = 2,
        output: bool = True,
    ) -> None:
        self.server = server
        self.target = session
        self.pause_after = pause_after
        self.output = output
        self._on_event = on_event
        self._parser = Parser()
        self._pending: deque[_Waiting] = deque()
        self._holding: set[str] = set()
        self._proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._attached: asyncio.Future[None] | None = None
        self._done = asyncio.Event()
        self._failure: str | None = None
        self.session_id: str | None = None
        self.session_name: str | None = None
        self.exit_reason: str | None = None

    async def __aenter__(self) -> ControlClient:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def closed(self) -> bool:
        return self._done.is_set()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    TERM = DAEMON_TERM
    """What this client tells tmux its terminal is. tmux lists it as the client's
    ``client_termname``, which is how a count of the people looking at a session
    (:func:`roost.pane.tmux.panes.people`) leaves the daemon's own clients out."""

    def argv(self) -> list[str]:
        flags = "ignore-size" + (f",pause-after={self.pause_after}" if self.pause_after else "")
        flags += "" if self.output else ",no-output"
        return self.server.argv("-u", "-C", "attach-session", "-E", "-f", flags, "-t", self.target)

    async def start(self, timeout: float = 10) -> None:
        """Spawn and attach; raises ``ControlClosed`` when the session can't be attached."""
        env = environment(TERM=self.TERM)
        self._attached = asyncio.get_running_loop().create_future()
        self._proc = await asyncio.create_subprocess_exec(
            *self.argv(),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        self._reader = asyncio.create_task(self._read(), name=f"tmux-control {self.target}")
        try:
            await asyncio.wait_for(asyncio.shield(self._attached), timeout)
        except (TimeoutError, ControlClosed):
            await self.close()
            raise ControlClosed(self._failure or f"can't attach to session {self.target}") from None
        except asyncio.CancelledError:
            if self._proc.returncode is None:
                self._proc.kill()
            raise

    async def command(self, *args: str) -> Reply:
        """Run one tmux command; its reply, or ``TmuxError`` with tmux's message on ``%error``."""
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()

        def settle(reply: Reply | None) -> None:
            if future.done():
                return
            if reply is None:
                future.set_exception(ControlClosed(f"control client for {self.target} closed"))
            else:
                future.set_result(reply)

        stdin = self._send(args, settle)
        # A broken pipe is the end of the stream: the reader fails ``future`` with ControlClosed.
        with contextlib.suppress(ConnectionError):
            await stdin.drain()
        reply = await future
        if not reply.ok:
            raise TmuxError(reply.text or f"{args[0]} failed")
        return reply

    async def capture(self, pane: str) -> bytes:
        """The pane's visible screen with its colours (``capture-pane -p -e``), rows joined by newlines."""
        reply = await self.command("capture-pane", "-p", "-e", "-t", pane)
        return b"\n".join(reply.lines)

    def hold(self, pane: str) -> None:
        """Skip ``pane``'s output from now until ``release(pane)`` (``%pause``, not resumed)."""
        if pane not in self._holding:
            self._holding.add(pane)
            with contextlib.suppress(ControlClosed):
                self._send(["refresh-client", "-A", f"{pane}:pause"], ignore)

    def release(self, pane: str) -> None:
        """Send ``pane``'s output again, from what it writes next; a pane not held is left alone."""
        if pane in self._holding:
            self._holding.discard(pane)
            with contextlib.suppress(ControlClosed):
                self._send(["refresh-client", "-A", f"{pane}:continue"], ignore)

    async def close(self, timeout: float = 5) -> None:
        """Detach (end of input makes tmux's client exit); kill it if it doesn't."""
        if self._proc is None:
            return
        if self._proc.stdin is not None and not self._proc.stdin.is_closing():
            self._proc.stdin.close()
        try:
            await asyncio.wait_for(self._done.wait(), timeout)
        except TimeoutError:
            if self._proc.returncode is None:
                self._proc.kill()
            await self._done.wait()

    async def wait_closed(self) -> str | None:
        """Wait for the client to end; tmux's ``%exit`` reason, if it gave one."""
        await self._done.wait()
        return self.exit_reason

    def ask_together(self, settle: _Together, *commands: Sequence[str]) -> None:
        """Send ``commands`` as one line. tmux runs a line's commands back to back, reading no
        pane output in between, which is what lets a capture line up with a pipe opened by the
        same line. ``settle`` gets the replies, up to the first that failed, or None."""
        if not commands or not all(commands):
            raise ValueError("no command")
        line = " ; ".join(" ".join(quote(arg) for arg in args) for args in commands)
        self._write(line, len(commands), settle)

    def _send(self, args: Sequence[str], settle: _Settle) -> asyncio.StreamWriter:
        if not args:
            raise ValueError("no command")
        line = " ".join(quote(arg) for arg in args)
        return self._write(line, 1, lambda replies: settle(replies[0] if replies else None))

    def _write(self, line: str, size: int, settle: _Together) -> asyncio.StreamWriter:
        proc = self._proc
        if self.closed or proc is None or proc.stdin is None or proc.stdin.is_closing():
            raise ControlClosed(f"control client for {self.target} closed")
        self._pending.append(_Waiting(size, settle))
        proc.stdin.write(line.encode() + b"\n")
        return proc.stdin

    async def _read(self) -> None:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        try:
            while chunk := await proc.stdout.read(READ_SIZE):
                for item in self._parser.feed(chunk):
                    self._dispatch(item)
            for item in self._parser.finish():
                self._dispatch(item)
        except asyncio.CancelledError:
            # Nobody will read the rest: end tmux's client rather than leave it attached.
            if proc.returncode is None:
                proc.kill()
            raise
        finally:
            await proc.wait()
            self._finish()

    def _finish(self) -> None:
        """The stream ended: fail whatever still waits, exactly once."""
        while self._pending:
            self._pending.popleft().take(None)
        if self._attached is not None and not self._attached.done():
            self._attached.set_exception(ControlClosed(self._failure or "control client ended"))
            # Mark it retrieved: ``start`` may already have given up waiting on it.
            self._attached.exception()
        self._done.set()

    def _dispatch(self, item: Notification) -> None:
        if isinstance(item, Reply):
            if item.ours and self._pending:
                answered = True  # a settle that raises still ends its line
                try:
                    answered = self._pending[0].take(item)
                finally:
                    if answered:
                        self._pending.popleft()
                return
            if not item.ok and self.session_id is None:
                self._failure = item.text
        elif isinstance(item, SessionChanged):
            self.session_id, self.session_name = item.session, item.name
            if self._attached is not None and not self._attached.done():
                self._attached.set_result(None)
        elif isinstance(item, Exit):
            self.exit_reason = item.reason
        elif isinstance(item, Pause) and self.pause_after and item.pane not in self._holding:
            self._emit(item)
            self._resume(item.pane)
            return
        self._emit(item)

    def _resume(self, pane: str) -> None:
        """Continue a paused pane, then capture its screen: what it wrote while paused is gone."""
        marker = f"%continue {pane}".encode()

        def continued(reply: Reply | None) -> None:
            # 3.3a writes %continue inside the reply block of the command that caused it.
            if reply is not None and marker in reply.lines:
                self._emit(Continue(pane))

        def captured(reply: Reply | None) -> None:
            if reply is not None and reply.ok:
                self._emit(Resync(pane, b"\n".join(reply.lines)))

        try:
            self._send(["refresh-client", "-A", f"{pane}:continue"], continued)
            self._send(["capture-pane", "-p", "-e", "-t", pane], captured)
        except ControlClosed:
            return

    def _emit(self, event: Event) -> None:
        if self._on_event is None:
            return
        try:
            self._on_event(event)
        except Exception:
            logger.exception(
                "control client %s: event handler failed on %s", self.target, type(event).__name__
            )


def ignore(_reply: Reply | None) -> None:
    """The settle for a command whose reply says nothing the caller needs."""
