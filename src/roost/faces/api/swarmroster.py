"""The union roster on the local listeners: ``GET /swarm/snapshot``, ``/swarm/events`` and
``/swarm/changes``, the swarm's answers to ``/snapshot``, ``/events`` and ``/changes``.

They read what :mod:`roost.remote.mesh.exchange` keeps (this node's roster and its peers', numbered
into one feed, :mod:`roost.remote.swarm.feed`) and never wait on a peer: an unreachable peer is in
the answer as its last frame, marked. Like every local route they are on the unix socket and
the loopback listener only; the swarm listener serves peers their roster stream, nothing here.

``?node=`` (a node's name or id) narrows each to one node: its row, its records, its changes.
A node the union does not hold is a 404; the answer for an unreachable node is its last frame,
marked, as everywhere.

``/swarm/changes`` takes the cursor of its own frames' ids, ``EPOCH:SEQ`` (``?since=``, or
``Last-Event-ID`` from a reconnecting EventSource); a cursor this node cannot replay (another
node's, another daemon run's, or older than the ring) is answered with a ``snapshot``.

``/swarm/events`` is one whole union per change, as the union stood right after it, its id
that change's ``EPOCH:SEQ`` (:meth:`roost.remote.swarm.feed.Feed.frames`); a client too slow to read
them is sent the union as it is then once it falls 256 behind, and its id says how many it
missed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from roost.base import sse
from roost.base.errors import Ambiguous
from roost.faces.api import context
from roost.faces.api.errors import NotFound, TooMany, Unavailable
from roost.faces.api.operations import operation, parameter
from roost.faces.api.streams import CURSOR, DIGITS, EventStream, cursor, frame
from roost.remote.swarm.feed import EVENTS, SNAPSHOT
from roost.remote.swarm.union import Whole, joined

if TYPE_CHECKING:
    from roost.remote.swarm.feed import Feed, Frame, Subscription, SwarmChange


def _feed(request: Request) -> Feed:
    mesh = context.of(request).swarm
    if mesh is None or mesh.exchange is None:
        raise Unavailable("this daemon runs no swarm")
    return mesh.exchange.feed


def _room(request: Request, feed: Feed) -> None:
    daemon = context.of(request)
    if daemon.live.streams + feed.subscribers >= daemon.max_streams:
        raise TooMany(f"{daemon.max_streams} streams are open already; close one first")


def _subscribe(request: Request, since: int | None, epoch: int | None) -> Subscription:
    feed = _feed(request)
    _room(request, feed)
    return feed.subscribe(since, epoch)


NODE = parameter(
    "query",
    "node",
    {"type": "string", "minLength": 1, "maxLength": 64},
    "only this node (its name or its node id): its row, its records, its changes",
)


def _only(request: Request, feed: Feed) -> str | None:
    """The node id ``?node=`` names, None when it names none; NotFound or Ambiguous otherwise."""
    wanted = request.query_params.get("node")
    if wanted is None:
        return None
    rows = feed.nodes()
    found = [row for row in rows if row["node_id"] == wanted] or [
        row for row in rows if row["node"] == wanted
    ]
    if not found:
        raise NotFound("no such node in this swarm's union (`rosterd nodes` lists the members)")
    if len(found) > 1:
        raise Ambiguous(
            "two nodes go by that name: name one by its node id", candidates=[r["node_id"] for r in found]
        )
    return str(found[0]["node_id"])


def _change_frame(change: SwarmChange, node_id: str | None) -> str:
    if isinstance(change.snapshot, Whole):
        if node_id is None:
            text = joined(change.head(), "snapshot", change.snapshot.text())
            return sse.encode(change.event, text, change.ident)
        return frame(
            change.event, change.ident, {**change.head(), "snapshot": change.snapshot.narrowed(node_id)}
        )
    if node_id is not None and change.node_id != node_id:
        return ""
    return frame(change.event, change.ident, change.to_json())


@operation(
    "the union roster: this node's records and its peers', each with node, node_id, peer_state, peer_age_ms",
    answers={200: ("SwarmSnapshot", "the union")},
    fails=(400, 404, 409, 503),
    params=(NODE,),
)
async def snapshot(request: Request) -> Response:
    feed = _feed(request)
    only = _only(request, feed)
    if only is None:
        return Response(feed.snapshot_text().encode(), media_type="application/json")
    return JSONResponse(feed.snapshot(only))


@operation(
    "SSE: one change per frame across the swarm (node and node_left among them); a snapshot "
    "first, or the replay after ?since",
    answers={200: ("text/event-stream", "SwarmChange frames")},
    fails=(400, 404, 409, 429, 503),
    params=(
        NODE,
        parameter("query", "since", CURSOR, "EPOCH:SEQ, the SSE id of the last frame seen (or SEQ)"),
        parameter("query", "status_epoch", {"type": "integer", "minimum": 0, "maximum": 10**DIGITS - 1}),
        parameter("header", "Last-Event-ID", CURSOR, "as since; wins over ?since"),
    ),
    events=dict.fromkeys(EVENTS, "SwarmChange"),
)
async def changes(request: Request) -> EventStream:
    since, epoch = cursor(request)
    only = _only(request, _feed(request))
    subscription = _subscribe(request, since, epoch)
    keepalive = context.of(request).keepalive

    async def frames() -> AsyncIterator[str]:
        while (batch := await subscription.next(keepalive)) is not None:
            yield "".join(_change_frame(change, only) for change in batch) or sse.KEEPALIVE

    return EventStream(frames(), subscription)


@operation(
    "SSE: the whole union roster on connect and after every change anywhere in the swarm (with "
    "?node=, every change of that node), one frame per change, its id the change's EPOCH:SEQ; a "
    "client 256 frames behind is sent the union as it is then, its id jumping past those it missed",
    answers={200: ("text/event-stream", "SwarmSnapshot frames")},
    fails=(400, 404, 409, 429, 503),
    params=(NODE,),
    events={SNAPSHOT: "SwarmSnapshot"},
)
async def events(request: Request) -> EventStream:
    feed = _feed(request)
    only = _only(request, feed)
    _room(request, feed)
    framer = feed.frames()
    keepalive = context.of(request).keepalive

    def whole(found: Frame, first: bool) -> str:
        ident = f"{feed.epoch}:{found.seq}"
        if only is None:
            return sse.encode(SNAPSHOT, found.text(feed.epoch, feed.texts), ident)
        if not first and found.node_id != only:
            return ""
        return frame(SNAPSHOT, ident, found.document(feed.epoch, only))

    async def frames() -> AsyncIterator[str]:
        first = True
        while (batch := await framer.next(keepalive)) is not None:
            yield "".join(whole(found, first) for found in batch) or sse.KEEPALIVE
            first = False

    return EventStream(frames(), framer)
