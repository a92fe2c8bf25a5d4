"""The web app's Web Push routes: the VAPID key, (un)subscribing, what a device is viewing, and
acknowledging a session that was opened (see :mod:`roost.notify.notifier`).

A subscription is what a browser's ``PushSubscription.toJSON()`` gives; its keys are checked
for shape by its schema (a P-256 point and a 16-byte secret) so a bad one is refused now, not at the
first push. The gate in front (:mod:`roost.api.gate`) decides who may call these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from roost.actions import lookup
from roost.api import context, schemas
from roost.api.body import read
from roost.api.errors import NotFound, Unavailable
from roost.api.operations import KEY, operation
from roost.notify.store import Subscription

if TYPE_CHECKING:
    from roost.notify.notifier import Notifier


def _notifier(request: Request) -> Notifier:
    notifier = context.of(request).push
    if notifier is None:
        raise Unavailable("push notifications are not running in this daemon")
    return notifier


def _session(request: Request, value: str | None) -> str | None:
    """A session key the roster knows, or None; 404 for one it does not."""
    if value is None:
        return None
    if context.of(request).live.roster.record(value) is None:
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
    roster = context.of(request).live.roster
    key = lookup.resolve(roster, request.path_params["key"])
    record = roster.record(key)
    if record is None:
        raise NotFound(f"no session {key!r}")
    cancelled = notifier.seen(key, record.revision)
    return JSONResponse({"session_key": key, "revision": record.revision, "cancelled": cancelled})
