"""Watch every session of roost's tmux server and say what changed, never by polling.

The daemon re-reads a pane's screen only when this reports that the pane wrote something,
and learns of panes, windows and sessions coming and going from the same stream.

Boundaries, as sentences:
- Exactly one control client per tmux session (keyed by its ``$N`` id, so a rename changes
  nothing): added when ``%sessions-changed`` shows a new session, dropped when it ends.
- Output is coalesced per pane: the first write is reported at once, then at most one report
  per pane per ``interval``, however much the pane writes. A pane that writes again while its
  next report is already due is held (tmux skips its output for the watcher) until that
  report: a flood costs tmux a few notices per interval, not an encoding of every byte.
- Structure is re-read (one ``list-panes`` per session) after any notice that may have
  changed it, and the difference becomes events: tmux 3.3a has no notice for a new pane, and
  reports a closed window of the client's own session as ``%unlinked-window-close``.
- Nothing runs while nothing happens: no timer outlives the coalescing window.

    async with Watcher(Server.from_env(), on_change) as watcher:
        ...  # on_change(Change("output", "$1", "@2", "%3")): time to re-read %3's screen
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from roost.pane.tmux.controlclient import ControlClient, ControlClosed, Event, Resync
from roost.pane.tmux.notifications import (
    LayoutChange,
    Output,
    SessionChanged,
    SessionRenamed,
    SessionsChanged,
    UnlinkedWindowClose,
    WindowAdd,
    WindowClose,
    WindowRenamed,
)
from roost.pane.tmux.pacing import Coalescer, Rerun
from roost.pane.tmux.server import Server, TmuxError

logger = logging.getLogger(__name__)

Kind = Literal[
    "output",
    "pane-added",
    "pane-moved",
    "pane-closed",
    "window-added",
    "window-renamed",
    "window-closed",
    "session-added",
    "session-renamed",
    "session-closed",
    "server-gone",
]
KINDS: tuple[Kind, ...] = get_args(Kind)
PANES_FORMAT = "#{window_id} #{pane_id} #{window_name}"
SESSIONS_FORMAT = "#{session_id} #{session_name}"


@dataclass(frozen=True, slots=True)
class Change:
    """One thing that changed; ids are tmux's (``$1 @2 %3``), ``name`` a window's or session's.

    ``resync`` on an ``output`` change means tmux dropped some of the pane's output (the
    watcher fell behind), so whatever the reader derived from output alone is stale.
    """

    kind: Kind
    session: str | None = None
    window: str | None = None
    pane: str | None = None
    name: str | None = None
    resync: bool = False


OnChange = Callable[[Change], None]


@dataclass
class _Session:
    id: str
    name: str
    client: ControlClient
    windows: dict[str, str] = field(default_factory=dict)
    panes: dict[str, str] = field(default_factory=dict)
    rescan: Rerun | None = None
    ended: asyncio.Task[None] | None = None


class Watcher:
    """``await start()``; ``on_change`` then hears of every change until ``await close()``.

    ``on_change`` is called from the stream reader itself, so it must return quickly: note
    the change or schedule work, never wait. ``start`` reports what already exists as added.
    When the server goes away the watcher reports ``server-gone`` and holds no clients; call
    ``reconcile()`` when the server may be back (say, a hook reported a pane) to resume.
    ``pause_after`` is how many seconds a client may fall behind before tmux drops that
    pane's output; the pane's next ``output`` change then carries ``resync``.
    """

    def __init__(
        self,
        server: Server,
        on_change: OnChange,
        *,
        interval: float = 0.05,
        pause_after: int | None = 2,
    ) -> None:
        self.server = server
        self.pause_after = pause_after
        self._on_change = on_change
        self._sessions: dict[str, _Session] = {}
        self._where: dict[str, tuple[str, str]] = {}
        self._coalescer = Coalescer(interval, self._report_output)
        self._reconciler = Rerun(self._reconcile)
        self._server_up = False
        self._closed = False
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> Watcher:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def server_running(self) -> bool:
        return self._server_up

    @property
    def clients(self) -> dict[str, ControlClient]:
        """The live control client of each watched session, by session id."""
        return {sid: record.client for sid, record in self._sessions.items()}

    def panes(self) -> dict[str, tuple[str, str]]:
        """Every watched pane: ``%N -> ($session, @window)``."""
        return dict(self._where)

    async def start(self) -> None:
        await self.reconcile()

    async def reconcile(self) -> None:
        """Match the clients to the server's sessions now, and wait until that is done."""
        if self._closed:
            return
        self._reconciler.trigger()
        await self._reconciler.idle()

    async def close(self) -> None:
        """Detach every client; no events are reported for what the watcher stops seeing."""
        self._closed = True
        self._reconciler.cancel()
        for task in list(self._tasks):
            task.cancel()
        records = list(self._sessions.values())
        self._sessions.clear()
        for record in records:
            if record.rescan is not None:
                record.rescan.cancel()
            if record.ended is not None:
                record.ended.cancel()
        await asyncio.gather(*(record.client.close() for record in records), return_exceptions=True)
        self._coalescer.close()

    def _emit(self, change: Change) -> None:
        try:
            self._on_change(change)
        except Exception:
            logger.exception("tmux watch: change handler failed on %s", change.kind)

    def _report_output(self, pane: str, resync: bool) -> None:
        for record in self._sessions.values():
            record.client.release(pane)  # what it wrote while held is on the screen read next
        session, window = self._where.get(pane, (None, None))
        self._emit(Change("output", session, window, pane, resync=resync))

    async def _reconcile(self) -> None:
        if self._closed:
            return
        listing = await self._list_sessions()
        if listing is None:
            for record in list(self._sessions.values()):
                await self._drop(record)
            if self._server_up:
                self._server_up = False
                self._emit(Change("server-gone"))
            return
        self._server_up = True
        for record in list(self._sessions.values()):
            if record.id not in listing:
                await self._drop(record)
        for sid, name in listing.items():
            record = self._sessions.get(sid)
            if record is not None and record.name != name:
                record.name = name
                self._emit(Change("session-renamed", sid, name=name))
        added = [sid for sid in listing if sid not in self._sessions]
        await asyncio.gather(*(self._add(sid, listing[sid]) for sid in added))

    async def _list_sessions(self) -> dict[str, str] | None:
        """Session id -> name, asked through a live client when there is one; None: no server."""
        for record in list(self._sessions.values()):
            with contextlib.suppress(ControlClosed, TmuxError):
                reply = await record.client.command("list-sessions", "-F", SESSIONS_FORMAT)
                return _pairs(reply.lines)
        status, out = await self.server.run_async("list-sessions", "-F", SESSIONS_FORMAT)
        return _pairs(out.splitlines()) if status == 0 else None

    async def _add(self, sid: str, name: str) -> None:
        # The handler finds ``record`` when events arrive, by which time it is bound.
        client = ControlClient(
            self.server, sid, lambda event: self._on_event(record, event), pause_after=self.pause_after
        )
        record = _Session(sid, name, client)
        record.rescan = Rerun(lambda: self._rescan(record))
        self._sessions[sid] = record
        try:
            await client.start()
        except ControlClosed:
            if self._sessions.get(sid) is record:
                del self._sessions[sid]
            return
        if self._closed or self._sessions.get(sid) is not record:
            await client.close()
            return
        self._emit(Change("session-added", sid, name=name))
        record.ended = asyncio.create_task(self._watch_end(record))
        record.rescan.trigger()
        await record.rescan.idle()

    async def _watch_end(self, record: _Session) -> None:
        await record.client.wait_closed()
        if self._closed or self._sessions.get(record.id) is not record:
            return
        await self._drop(record)
        self._reconciler.trigger()

    async def _drop(self, record: _Session) -> None:
        """Forget a session: its panes, windows and itself are reported closed, once."""
        if self._sessions.get(record.id) is not record:
            return
        del self._sessions[record.id]
        if record.rescan is not None:
            record.rescan.cancel()
        self._apply(record, {}, {})
        self._emit(Change("session-closed", record.id, name=record.name))
        if record.ended is not None and asyncio.current_task() is not record.ended:
            record.ended.cancel()
        await record.client.close()

    def _on_event(self, record: _Session, event: Event) -> None:
        if isinstance(event, Output):
            # Held from the first output that waits for a report, not the second: a flood
            # then costs one %output line per interval, not two.
            self._coalescer.mark(event.pane)
            if self._coalescer.due(event.pane):
                record.client.hold(event.pane)
        elif isinstance(event, Resync):
            self._coalescer.mark(event.pane, resync=True)
        elif isinstance(event, SessionsChanged):
            self._reconciler.trigger()
        elif isinstance(event, WindowRenamed) and event.window in record.windows:
            if record.windows[event.window] != event.name:
                record.windows[event.window] = event.name
                self._emit(Change("window-renamed", record.id, event.window, name=event.name))
        elif self._reshapes(record, event):
            self._trigger_rescan(record)
        elif isinstance(event, SessionRenamed) and event.session in (record.id, None):
            if record.name != event.name:
                record.name = event.name
                self._emit(Change("session-renamed", record.id, name=event.name))
        elif isinstance(event, SessionChanged) and event.session != record.id:
            # The client was moved (detach-on-destroy off, switch-client): the session it
            # watched is gone or unwatched, and the one it moved to has a client of its own.
            self._background(self._drop(record))
            self._reconciler.trigger()

    @staticmethod
    def _reshapes(record: _Session, event: Event) -> bool:
        """Whether the notice may mean panes or windows of this session came or went."""
        if isinstance(event, UnlinkedWindowClose):
            return event.window in record.windows
        return isinstance(event, WindowAdd | WindowClose | LayoutChange | WindowRenamed)

    def _background(self, job: Coroutine[Any, Any, None]) -> None:
        """Run ``job`` from a synchronous callback, keeping the task alive until it is done."""
        task = asyncio.get_running_loop().create_task(job)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _trigger_rescan(self, record: _Session) -> None:
        if record.rescan is not None and self._sessions.get(record.id) is record:
            record.rescan.trigger()

    async def _rescan(self, record: _Session) -> None:
        try:
            reply = await record.client.command("list-panes", "-s", "-t", record.id, "-F", PANES_FORMAT)
        except (ControlClosed, TmuxError):
            return
        windows: dict[str, str] = {}
        panes: dict[str, str] = {}
        for line in reply.lines:
            window, _, rest = line.decode(errors="replace").partition(" ")
            pane, _, name = rest.partition(" ")
            windows[window] = name
            panes[pane] = window
        if self._sessions.get(record.id) is record:
            self._apply(record, windows, panes)

    def _apply(self, record: _Session, windows: dict[str, str], panes: dict[str, str]) -> None:
        """Report the difference between what the session had and what it has now."""
        sid = record.id
        for window, name in windows.items():
            if window not in record.windows:
                self._emit(Change("window-added", sid, window, name=name))
            elif record.windows[window] != name:
                self._emit(Change("window-renamed", sid, window, name=name))
        for pane, window in panes.items():
            before = record.panes.get(pane)
            if before is None:
                self._emit(Change("pane-added", sid, window, pane))
            elif before != window:
                self._emit(Change("pane-moved", sid, window, pane))
            self._where[pane] = (sid, window)
        for pane, window in record.panes.items():
            if pane not in panes:
                self._emit(Change("pane-closed", sid, window, pane))
                owner = self._where.get(pane)
                # A pane of a window linked into two sessions lives on in the other one.
                if owner is None or owner[0] == sid:
                    self._where.pop(pane, None)
                    self._coalescer.forget(pane)
                    record.client.release(pane)
        for window, name in record.windows.items():
            if window not in windows:
                self._emit(Change("window-closed", sid, window, name=name))
        record.windows = windows
        record.panes = panes


def _pairs(lines: list[bytes] | tuple[bytes, ...]) -> dict[str, str]:
    """``ID NAME`` lines as a dict; a name may contain spaces."""
    found: dict[str, str] = {}
    for line in lines:
        key, _, value = line.decode(errors="replace").partition(" ")
        if key:
            found[key] = value
    return found
