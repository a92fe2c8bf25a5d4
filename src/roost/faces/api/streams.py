"""The two change streams, as server-sent events.

- ``GET /events``: the whole roster (a ``snapshot`` frame) on connect and after every change.
  Simplest to consume, heavy to notify on.
- ``GET /changes``: one frame per change (``session_started``, ``attention``, …), after a
  first frame that is either the replay of everything since ``?since=`` or a ``snapshot``.

Every frame's SSE id is ``<status_epoch>:<seq>``, so a reconnecting EventSource sends it back as
``Last-Event-ID`` and a daemon restarted since (a new epoch) answers with a snapshot instead of
replaying another epoch's numbers.

``GET /changes?terminals=1`` (the web page's) also carries a ``terminals`` frame, first and
then whenever tmux's panes, windows or sessions changed
(:func:`roost.actions.terminals.watch_terminals`), saying "read ``GET /terminals`` again". It
has no id, so it leaves the resume point alone. It rides the same connection because a browser
opens at most six to a host over HTTP/1.1, shared by all of its tabs, and each open tab holds
its streams.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import AbstractContextManager
from typing import Any

from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from roost.actions.terminals import Watch, watch_terminals
from roost.base import sse
from roost.faces.api import context
from roost.faces.api.errors import BadRequest, TooMany
from roost.faces.api.operations import operation, parameter
from roost.truth.roster import Change
from roost.truth.roster.changes import EVENTS, SNAPSHOT
from roost.truth.roster.live import Stream

TERMINALS = "terminals"
"""The event that says: read ``GET /terminals`` again."""
GATHER = 0.1
"""Seconds a ``terminals`` frame waits for the rest of a burst: starting a command renames its
window, splitting a pane adds one and moves others, and each page should list once for all."""
DIGITS = 18
"""Digits a cursor may hold: a sequence number or an epoch fits in far fewer, and ``int()``
refuses a string of thousands (ValueError) rather than reading it."""


class EventStream(StreamingResponse):
    """An SSE response that gives its subscription back however the connection ends (a
    roster's :class:`Stream`, or the swarm feed's subscription)."""

    def __init__(self, frames: AsyncIterator[str], stream: AbstractContextManager[object]) -> None:
        super().__init__(
            frames,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
        self._stream = stream

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._stream.__exit__()


def frame(event: str, ident: str | None, data: dict[str, Any]) -> str:
    """One SSE frame of a JSON document; ``ident`` None leaves the client's last event id."""
    return sse.encode(event, json.dumps(data, separators=(",", ":")), ident)


def _terminals_frame(version: int) -> str:
    return frame(TERMINALS, None, {"version": version})


def _change_frame(change: Change) -> str:
    return frame(change.event, f"{change.status_epoch}:{change.seq}", change.to_json())


SINCE_WANTED = (
    f"since must be SEQ or STATUS_EPOCH:SEQ, each a non-negative integer of at most {DIGITS} digits, "
    "as a change frame's id gives them (and so must Last-Event-ID)"
)
EPOCH_WANTED = f"status_epoch must be a non-negative integer of at most {DIGITS} digits"
TERMINALS_WANTED = "terminals must be 0 or 1"
"""What a bad cursor or flag is told: what a good value looks like, never the value sent back,
which may be anything a page or a proxy put there (markup, a header's worth of text)."""


def _number(text: str, refusal: str) -> int:
    if not (text.isascii() and text.isdigit()) or len(text) > DIGITS:
        raise BadRequest(refusal)
    return int(text)


def cursor(request: Request) -> tuple[int | None, int | None]:
    """(since, status_epoch) from ``Last-Event-ID``, else ``?since=SEQ`` or ``?since=EPOCH:SEQ``,
    and ``?status_epoch=``. The header wins: a reconnecting EventSource sends it along with the
    ``?since=`` its address was opened with, and the header is where it really got to."""
    given = (request.headers.get("last-event-id"), request.query_params.get("since"))
    cursors = [_cursor(text) for text in given if text is not None]  # both are checked, if sent
    epoch_text = request.query_params.get("status_epoch")
    epoch = _number(epoch_text, EPOCH_WANTED) if epoch_text is not None else None
    if not cursors:
        return None, epoch
    since, own = cursors[0]
    return since, epoch if own is None else own


def _cursor(text: str) -> tuple[int, int | None]:
    """(seq, status_epoch or None) of ``SEQ`` or ``STATUS_EPOCH:SEQ``."""
    if ":" in text:
        first, _, rest = text.partition(":")
        return _number(rest, SINCE_WANTED), _number(first, SINCE_WANTED)
    return _number(text, SINCE_WANTED), None


def _open(request: Request, since: int | None, epoch: int | None, *, replay: bool) -> Stream:
    daemon = context.of(request)
    if daemon.live.streams >= daemon.max_streams:
        raise TooMany(f"{daemon.max_streams} streams are open already; close one first")
    return daemon.live.subscribe(since, epoch, replay=replay)


def _wants_terminals(request: Request) -> bool:
    raw = request.query_params.get("terminals")
    if raw is None or raw == "0":
        return False
    if raw == "1":
        return True
    raise BadRequest(TERMINALS_WANTED)


CURSOR = {"type": "string", "pattern": f"^([0-9]{{1,{DIGITS}}}:)?[0-9]{{1,{DIGITS}}}$"}
"""A resume point as a change frame's id gives it: SEQ or STATUS_EPOCH:SEQ."""


@operation(
    "SSE: one Change per frame; a snapshot first, or the replay after ?since",
    answers={200: ("text/event-stream", "Change frames")},
    fails=(400, 429),
    params=(
        parameter("query", "since", CURSOR, "the last seq seen (or EPOCH:SEQ, the SSE id of the last frame)"),
        parameter("query", "status_epoch", {"type": "integer", "minimum": 0, "maximum": 10**DIGITS - 1}),
        parameter(
            "query",
            "terminals",
            {"type": "string", "enum": ["0", "1"]},
            "1: also a `terminals` frame (no id) first and whenever tmux's panes, windows or sessions "
            "change, meaning: read GET /terminals again",
        ),
        parameter(
            "header",
            "Last-Event-ID",
            CURSOR,
            "as since; wins over ?since (a reconnecting EventSource sends both)",
        ),
    ),
    events={**dict.fromkeys(EVENTS, "Change"), TERMINALS: "TerminalsChanged"},
)
async def changes(request: Request) -> EventStream:
    since, epoch = cursor(request)
    terminals = _wants_terminals(request)
    stream = _open(request, since, epoch, replay=True)
    daemon = context.of(request)
    keepalive = daemon.keepalive
    if terminals:
        return EventStream(_with_terminals(stream, watch_terminals(daemon.door), keepalive), stream)

    async def frames() -> AsyncIterator[str]:
        while (batch := await stream.next(keepalive)) is not None:
            yield "".join(_change_frame(change) for change in batch) or sse.KEEPALIVE

    return EventStream(frames(), stream)


async def _with_terminals(stream: Stream, watch: Watch, keepalive: float) -> AsyncIterator[str]:
    """Change frames and ``terminals`` frames, each sent as soon as it is due: a burst being
    gathered for the terminal list never holds back a badge."""
    sent = watch.seen
    yield _terminals_frame(sent)
    changes: asyncio.Task[tuple[Change, ...] | None] | None = None
    topology: asyncio.Task[int | None] | None = None
    try:
        while True:
            changes = changes or asyncio.ensure_future(stream.next(keepalive))
            topology = topology or asyncio.ensure_future(watch.next(keepalive, GATHER))
            done, _ = await asyncio.wait((changes, topology), return_when=asyncio.FIRST_COMPLETED)
            out = ""
            if changes in done:
                batch, changes = changes.result(), None
                if batch is None:
                    return
                out += "".join(_change_frame(change) for change in batch)
            if topology in done:
                version, topology = topology.result(), None
                if version is None:
                    return
                if version != sent:
                    sent = version
                    out += _terminals_frame(version)
            yield out or sse.KEEPALIVE
    finally:
        for task in (changes, topology):
            if task is not None:
                task.cancel()


@operation(
    "SSE: the whole roster on connect and after every change",
    answers={200: ("text/event-stream", "snapshot frames")},
    fails=(429,),
    events={SNAPSHOT: "Snapshot"},
)
async def events(request: Request) -> EventStream:
    stream = _open(request, None, None, replay=False)
    daemon = context.of(request)
    roster = daemon.live.roster

    def whole() -> str:
        return frame(SNAPSHOT, f"{roster.status_epoch}:{roster.head}", roster.snapshot())

    async def frames() -> AsyncIterator[str]:
        yield whole()
        while (batch := await stream.next(daemon.keepalive)) is not None:
            yield whole() if batch else sse.KEEPALIVE

    return EventStream(frames(), stream)
