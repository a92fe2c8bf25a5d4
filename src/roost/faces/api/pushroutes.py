"""The web app's Web Push routes: the VAPID key, (un)subscribing, what a device is viewing, and
acknowledging a session that was opened (see :mod:`roost.services.notify.notifier`).

A subscription is what a browser's ``PushSubscription.toJSON()`` gives; its keys are checked
for shape by its schema (a P-256 point and a 16-byte secret) so a bad one is refused now, not at the
first push. The gate in front (:mod:`roost.faces.api.gate`) decides who may call these.

In a swarm the notifier pushes for another node's sessions too (their records as the roster
exchange keeps them), so a device may view, and acknowledge, a session key of another node
that this node holds in its union; such a key is taken as given, never resolved by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from roost.actions import remote, sessions
from roost.faces.api import context, schemas
from roost.faces.api.body import read
from roost.faces.api.errors import NotFound, Unavailable
from roost.faces.api.operations import KEY, operation
from roost.services.notify.store import Subscription
from roost.truth.roster.records import Record

if TYPE_CHECKING:
    from roost.services.notify.notifier import Notifier


def _notifier(request: Request) -> Notifier:
    notifier = context.of(request).push
    if notifier is None:
        raise Unavailable("push notifications are not running in this daemon")
    return notifier


def _held(request: Request, key: str) -> Record | None:
    """The record of ``key``: this node's, or another node's as this node's union holds it."""
    door = context.of(request).door
    found = door.live.roster.record(key)
    owner = remote.owner_of(key)
    if found is None and owner is not None and door.peers is not None:
        peer = door.peers.get(owner)
        found = peer.records.get(key) if peer is not None else None
    return found


def _session(request: Request, value: str | None) -> str | None:
    """A session key this node knows (its own, or a peer's in its union), or None; 404 for one
    it does not."""
    if value is None:
        return None
    if _held(request, value) is None:
        raise NotFound(f"no session {value!r}")
    return value


@operation("the key browsers subscribe with", answers={200: ("VapidKey", "the key")}, fails=(503,))
async def vapid_key(request: Request) -> JSONResponse:
    return JSONResponse({"key": _notifier(request).keys.public_key})


@operation(
    "subscribe a device to pushes",
    answers={201: ("Subscribed", "subscribed")},
    fails=(400, 404, 413, 503),
    body=schemas.Subscribe,
)
async def subscribe(request: Request) -> Response:
    notifier = _notifier(request)
    body = await read(request, schemas.Subscribe)
    subscription = Subscription(body.endpoint, body.keys.p256dh, body.keys.auth)
    notifier.subscribe(subscription, _session(request, body.viewing))
    return JSONResponse({"endpoint": body.endpoint}, status_code=201)


@operation(
    "unsubscribe a device",
    answers={204: (None, "unsubscribed")},
    fails=(400, 404, 413, 503),
    body=schemas.Unsubscribe,
)
async def unsubscribe(request: Request) -> Response:
    notifier = _notifier(request)
    endpoint = (await read(request, schemas.Unsubscribe)).endpoint
    if not notifier.unsubscribe(endpoint):
        raise NotFound("no such subscription")
    return Response(status_code=204)


@operation(
    "which session a device shows now (its pushes are held back meanwhile)",
    answers={204: (None, "noted")},
    fails=(400, 404, 413, 503),
    body=schemas.Viewing,
)
async def viewing(request: Request) -> Response:
    notifier = _notifier(request)
    body = await read(request, schemas.Viewing)
    endpoint, session = body.endpoint, _session(request, body.session)
    if not notifier.subscribed(endpoint):
        raise NotFound("no such subscription")
    notifier.viewing[endpoint] = session
    return Response(status_code=204)


@operation(
    "a device opened this session: withdraw its pending push",
    answers={200: ("Seen", "acknowledged")},
    fails=(404, 409, 503),
    params=(KEY,),
)
async def seen(request: Request) -> JSONResponse:
    notifier = _notifier(request)
    given = request.path_params["key"]
    record = _held(request, given)  # an exact key, of this node or another
    if record is None:
        roster = context.of(request).live.roster
        record = roster.record(sessions.resolve(roster, given))
    if record is None:
        raise NotFound(f"no session {given!r}")
    key = record.session_key
    cancelled = notifier.seen(key, record.revision)
    return JSONResponse({"session_key": key, "revision": record.revision, "cancelled": cancelled})
