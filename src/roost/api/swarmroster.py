"""The union roster on the local listeners: ``GET /swarm/snapshot``, ``/swarm/events`` and
``/swarm/changes``, the swarm's answers to ``/snapshot``, ``/events`` and ``/changes``.

They read what :mod:`roost.mesh.exchange` keeps (this node's roster and its peers', numbered
into one feed, :mod:`roost.swarm.feed`) and never wait on a peer: an unreachable peer is in
the answer as its last frame, marked. Like every local route they are on the unix socket and
the loopback listener only; the swarm listener serves peers their roster stream, nothing here.

``/swarm/changes`` takes the cursor of its own frames' ids, ``EPOCH:SEQ`` (``?since=``, or
``Last-Event-ID`` from a reconnecting EventSource); a cursor this node cannot replay (another
node's, another daemon run's, or older than the ring) is answered with a ``snapshot``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.api import context
from roost.api.errors import TooMany, Unavailable
from roost.api.operations import operation, parameter
from roost.api.streams import CURSOR, DIGITS, KEEPALIVE_FRAME, EventStream, cursor, frame
from roost.swarm.feed import EVENTS, SNAPSHOT

if TYPE_CHECKING:
    from roost.swarm.feed import Feed, Subscription, SwarmChange


def _feed(request: Request) -> Feed:
    mesh = context.of(request).swarm
    if mesh is None or mesh.exchange is None:
        raise Unavailable("this daemon runs no swarm")
    return mesh.exchange.feed


def _subscribe(request: Request, since: int | None, epoch: int | None) -> Subscription:
    daemon = context.of(request)
    feed = _feed(request)
    if daemon.live.streams + feed.subscribers >= daemon.max_streams:
        raise TooMany(f"{daemon.max_streams} streams are open already; close one first")
    return feed.subscribe(since, epoch)


def _change_frame(change: SwarmChange) -> str:
    return frame(change.event, change.ident, change.to_json())


@operation(
    "the union roster: this node's records and its peers', each with node, node_id, peer_state, peer_age_ms",
    answers={200: ("SwarmSnapshot", "the union")},
    fails=(503,),
)
async def snapshot(request: Request) -> JSONResponse:
    return JSONResponse(_feed(request).snapshot())


@operation(
    "SSE: one change per frame across the swarm (node and node_left among them); a snapshot "
    "first, or the replay after ?since",
    answers={200: ("text/event-stream", "SwarmChange frames")},
    fails=(400, 429, 503),
    params=(
        parameter("query", "since", CURSOR, "EPOCH:SEQ, the SSE id of the last frame seen (or SEQ)"),
        parameter("query", "status_epoch", {"type": "integer", "minimum": 0, "maximum": 10**DIGITS - 1}),
        parameter("header", "Last-Event-ID", CURSOR, "as since; wins over ?since"),
    ),
    events=dict.fromkeys(EVENTS, "SwarmChange"),
)
async def changes(request: Request) -> EventStream:
    since, epoch = cursor(request)
    subscription = _subscribe(request, since, epoch)
    keepalive = context.of(request).keepalive

    async def frames() -> AsyncIterator[str]:
        while (batch := await subscription.next(keepalive)) is not None:
            yield "".join(_change_frame(change) for change in batch) or KEEPALIVE_FRAME

    return EventStream(frames(), subscription)


@operation(
    "SSE: the whole union roster on connect and after every change anywhere in the swarm",
    answers={200: ("text/event-stream", "SwarmSnapshot frames")},
    fails=(429, 503),
    events={SNAPSHOT: "SwarmSnapshot"},
)
async def events(request: Request) -> EventStream:
    subscription = _subscribe(request, None, None)
    feed = _feed(request)
    keepalive = context.of(request).keepalive

    def whole() -> str:
        return frame(SNAPSHOT, f"{feed.epoch}:{feed.head}", feed.snapshot())

    async def frames() -> AsyncIterator[str]:
        await subscription.next(0)  # the subscription's own first snapshot: whole() says it now
        yield whole()
        while (batch := await subscription.next(keepalive)) is not None:
            yield whole() if batch else KEEPALIVE_FRAME

    return EventStream(frames(), subscription)
