"""The web app's Web Push routes: the VAPID key, (un)subscribing, what a device is viewing, and
acknowledging a session that was opened (see :mod:`roost.notify.service`).

A subscription is what a browser's ``PushSubscription.toJSON()`` gives; its keys are checked
for shape here (a P-256 point and a 16-byte secret) so a bad one is refused now, not at the
first push. The gate in front (:mod:`roost.api.gate`) decides who may call these.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from roost.api import lookup, services
from roost.api.body import read_object
from roost.api.errors import BadRequest, NotFound, Unavailable
from roost.notify.store import Subscription

if TYPE_CHECKING:
    from roost.notify.service import Notifier

POINT_BYTES = 65
"""An uncompressed P-256 point: 0x04, then x and y."""
AUTH_BYTES = 16


def _notifier(request: Request) -> Notifier:
    notifier = services.of(request).push
    if notifier is None:
        raise Unavailable("push notifications are not running in this daemon")
    return notifier


def _text(doc: dict[str, Any], name: str) -> str:
    value = doc.get(name)
    if not isinstance(value, str) or not value:
        raise BadRequest(f"{name} must be a non-empty string")
    return value


def _endpoint(doc: dict[str, Any]) -> str:
    endpoint = _text(doc, "endpoint")
    try:  # urlsplit refuses some URLs itself (an unclosed IPv6 bracket) with ValueError
        parts = urlsplit(endpoint)
        hostname = parts.hostname
    except ValueError:
        hostname = None
    if not hostname or parts.scheme not in ("https", "http"):
        raise BadRequest("endpoint must be an http(s) URL")
    return endpoint


def _key(keys: dict[str, Any], name: str, size: int, what: str) -> str:
    value = _text(keys, name)
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        raise BadRequest(f"keys.{name} is not base64url") from None
    if len(raw) != size or (size == POINT_BYTES and raw[0] != 4):
        raise BadRequest(
            f"keys.{name} is not a {'P-256 point' if size == POINT_BYTES else f'{size}-byte secret'}"
        )
    return value


def _session(request: Request, value: Any) -> str | None:
    """A session key the roster knows, or None; 404 for one it does not."""
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise BadRequest("the session must be a session key or null")
    if services.of(request).live.roster.record(value) is None:
        raise NotFound(f"no session {value!r}")
    return value


async def vapid_key(request: Request) -> JSONResponse:
    return JSONResponse({"key": _notifier(request).keys.public_key})


async def subscribe(request: Request) -> Response:
    notifier = _notifier(request)
    doc = await read_object(request)
    endpoint = _endpoint(doc)
    keys = doc.get("keys")
    if not isinstance(keys, dict):
        raise BadRequest("keys must be an object with p256dh and auth")
    subscription = Subscription(
        endpoint,
        _key(keys, "p256dh", POINT_BYTES, "a P-256 point"),
        _key(keys, "auth", AUTH_BYTES, "a 16-byte secret"),
    )
    notifier.subscribe(subscription, _session(request, doc.get("viewing")))
    return JSONResponse({"endpoint": endpoint}, status_code=201)


async def unsubscribe(request: Request) -> Response:
    notifier = _notifier(request)
    endpoint = _endpoint(await read_object(request))
    if not notifier.unsubscribe(endpoint):
        raise NotFound("no such subscription")
    return Response(status_code=204)


async def viewing(request: Request) -> Response:
    notifier = _notifier(request)
    doc = await read_object(request)
    endpoint = _endpoint(doc)
    if "session" not in doc:
        raise BadRequest("session is required (a session key, or null for none)")
    session = _session(request, doc["session"])
    if not notifier.subscribed(endpoint):
        raise NotFound("no such subscription")
    notifier.viewing[endpoint] = session
    return Response(status_code=204)


async def seen(request: Request) -> JSONResponse:
    notifier = _notifier(request)
    roster = services.of(request).live.roster
    key = lookup.resolve(roster, request.path_params["key"])
    record = roster.record(key)
    if record is None:
        raise NotFound(f"no session {key!r}")
    cancelled = notifier.seen(key, record.revision)
    return JSONResponse({"session_key": key, "revision": record.revision, "cancelled": cancelled})
