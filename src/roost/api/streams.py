"""The change streams, as server-sent events.

- ``GET /events``: the whole roster (a ``snapshot`` frame) on connect and after every change.
  Simplest to consume, heavy to notify on.
- ``GET /changes``: one frame per change (``session_started``, ``attention``, …), after a
  first frame that is either the replay of everything since ``?since=`` or a ``snapshot``.

Every frame's SSE id is ``<status_epoch>:<seq>``, so a reconnecting EventSource sends it back as
``Last-Event-ID`` and a daemon restarted since (a new epoch) answers with a snapshot instead of
replaying another epoch's numbers.

- ``GET /terminals/changes`` (the web page's): a ``terminals`` frame on connect and whenever
  tmux's panes, windows or sessions changed since the last one; it carries no id, because the
  first frame already says "read the list again". Bursts are gathered for ``GATHER`` seconds.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from roost.api import services
from roost.api.errors import BadRequest, TooMany
from roost.daemon.layout import Watch
from roost.daemon.live import Stream
from roost.roster import Change
from roost.roster.changes import SNAPSHOT

KEEPALIVE_FRAME = ": keepalive\n\n"

GATHER = 0.1
"""Seconds a ``terminals`` frame waits for more notices: a command starting in a shell renames
its window, and a burst of those should cost each page one listing, not ten."""


class EventStream(StreamingResponse):
    """An SSE response that gives its subscription back however the connection ends."""

    def __init__(self, frames: AsyncIterator[str], stream: Stream | Watch) -> None:
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


def frame(event: str, ident: str, data: dict[str, Any]) -> str:
    return f"id: {ident}\nevent: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def _terminals_frame(version: int) -> str:
    return f"event: terminals\ndata: {json.dumps({'version': version})}\n\n"


def _change_frame(change: Change) -> str:
    return frame(change.event, f"{change.status_epoch}:{change.seq}", change.to_json())


def _number(text: str, what: str) -> int:
    if not (text.isascii() and text.isdigit()):
        raise BadRequest(f"{what} must be a non-negative integer, got {text!r}")
    return int(text)


def cursor(request: Request) -> tuple[int | None, int | None]:
    """(since, status_epoch) from ``?since=SEQ`` or ``?since=EPOCH:SEQ`` (or ``Last-Event-ID``),
    and ``?status_epoch=``."""
    raw = request.query_params.get("since") or request.headers.get("last-event-id")
    epoch_text = request.query_params.get("status_epoch")
    epoch = _number(epoch_text, "status_epoch") if epoch_text else None
    if not raw:
        return None, epoch
    if ":" in raw:
        first, _, rest = raw.partition(":")
        return _number(rest, "since"), _number(first, "the since epoch")
    return _number(raw, "since"), epoch


def _room(request: Request) -> services.Services:
    """The daemon's services, once it has room for one more stream of any kind."""
    daemon = services.of(request)
    if daemon.streams >= daemon.max_streams:
        raise TooMany(f"{daemon.max_streams} streams are open already; close one first")
    return daemon


def _open(request: Request, since: int | None, epoch: int | None, *, replay: bool) -> Stream:
    return _room(request).live.subscribe(since, epoch, replay=replay)


async def changes(request: Request) -> EventStream:
    since, epoch = cursor(request)
    stream = _open(request, since, epoch, replay=True)
    keepalive = services.of(request).keepalive

    async def frames() -> AsyncIterator[str]:
        while (batch := await stream.next(keepalive)) is not None:
            yield "".join(_change_frame(change) for change in batch) or KEEPALIVE_FRAME

    return EventStream(frames(), stream)


async def terminals(request: Request) -> EventStream:
    daemon = _room(request)
    watch = daemon.layout.watch()

    async def frames() -> AsyncIterator[str]:
        sent = watch.seen
        yield _terminals_frame(sent)
        while (version := await watch.next(daemon.keepalive)) is not None:
            if version == sent:
                yield KEEPALIVE_FRAME
                continue
            await asyncio.sleep(GATHER)
            sent = watch.latest()
            yield _terminals_frame(sent)

    return EventStream(frames(), watch)


async def events(request: Request) -> EventStream:
    stream = _open(request, None, None, replay=False)
    daemon = services.of(request)
    roster = daemon.live.roster

    def whole() -> str:
        return frame(SNAPSHOT, f"{roster.status_epoch}:{roster.head}", roster.snapshot())

    async def frames() -> AsyncIterator[str]:
        yield whole()
        while (batch := await stream.next(daemon.keepalive)) is not None:
            yield whole() if batch else KEEPALIVE_FRAME

    return EventStream(frames(), stream)
