"""The swarm listener's app: a route table behind one door that lets only members' signed
requests through.

Every request but a join must be signed by a current member (:mod:`roost.swarm.signing`:
method, path with query, timestamp, nonce, body digest). One that is not — a stranger's, a
revoked node's, a replay, one re-targeted at another path or query, one whose clock is off —
gets the same 401 ``{"error": "refused"}`` before routing, so it learns nothing: not why, not
whether the path exists, not whether a session does. Why is counted per code in
:class:`Refusals`, for ``rosterd nodes`` and the daemon's log, never told to the caller.

A WebSocket's opening request is signed the same way, as a ``GET`` with no body (a terminal
relayed from the node a person is logged into, :mod:`roost.mesh.relay`); a refused one is
closed before it is accepted.

``POST /swarm/join`` is the one open door: the joiner is no member yet, its invite token and
its self-signed hello are its proof, and a refused token is told why (``used``, ``expired``…)
so the person holding it knows what to ask for.

The route table is the caller's: :func:`app` takes the routes a feature serves to peers (the
hello now; a roster stream and proxied actions later), and a handler finds the member that
signed its request in ``request.state.peer``.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence

from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from roost.errors import PeerRefused, RoostError
from roost.mesh.membership import Membership
from roost.swarm import canonical
from roost.swarm.members import Member

log = logging.getLogger("rosterd.swarm")

JOIN = "/swarm/join"
HELLO = "/swarm/hello"
MAX_BODY = canonical.MAX_DOCUMENT


class Refusals(Counter[str]):
    """How many requests were refused, by the reason only this node knows."""


def target(scope: Scope) -> str:
    """The request target as the sender signed it: the raw path, and its query when it has one."""
    path = scope.get("raw_path") or scope["path"].encode("ascii", "replace")
    query = scope.get("query_string") or b""
    return (path + (b"?" + query if query else b"")).decode("latin-1")


async def _body(receive: Receive, limit: int) -> bytes | None:
    """The whole body, or None when it is larger than ``limit``."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def again() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again


class Signed:
    """The door: a request reaches the routes only when a member signed it (or it is a join)."""

    def __init__(
        self, app: ASGIApp, membership: Membership, refusals: Refusals, limits: Mapping[str, int]
    ) -> None:
        self.app = app
        self.membership = membership
        self.refusals = refusals
        self.limits = limits
        """Bytes of body a path takes, where it is not :data:`MAX_BODY` (a handoff's files)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
            return
        if scope["type"] != "http":
            await self._refuse(scope, receive, send, "malformed")
            return
        body = await _body(receive, self.limits.get(scope.get("path", ""), MAX_BODY))
        if body is None:
            await self._refuse(scope, receive, send, "too_large")
            return
        if scope["path"] == JOIN and scope["method"] == "POST":
            await self.app(scope, _replay(body, receive), send)
            return
        try:
            peer = self.membership.verify(scope["method"], target(scope), Headers(scope=scope), body)
        except PeerRefused as refused:
            await self._refuse(scope, receive, send, refused.code or "refused")
            return
        scope.setdefault("state", {})["peer"] = peer
        await self.app(scope, _replay(body, receive), send)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A WebSocket's opening request is signed as a ``GET`` of its path and query with no
        body (a relayed terminal, :mod:`roost.mesh.relay`); a refused one is closed before it
        is accepted, which the client sees as a 403 and nothing more."""
        try:
            peer = self.membership.verify("GET", target(scope), Headers(scope=scope), b"")
        except PeerRefused as refused:
            await self._refuse(scope, receive, send, refused.code or "refused")
            return
        scope.setdefault("state", {})["peer"] = peer
        await self.app(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, code: str) -> None:
        self.refusals[code] += 1
        log.info("refused a peer request (%s) from %s", code, (scope.get("client") or ("?",))[0])
        if scope["type"] == "http":
            await JSONResponse({"error": "refused"}, status_code=401)(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})


def peer(request: HTTPConnection) -> Member:
    """The member that signed this request or WebSocket (every route but a join has one)."""
    found: Member = request.state.peer
    return found


async def _failure(_request: Request, error: Exception) -> Response:
    assert isinstance(error, RoostError)
    return JSONResponse({"error": error.message, **error.extra}, status_code=error.status)


async def _http_error(_request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    return JSONResponse({"error": "no such route"}, status_code=error.status_code)


Handler = Callable[[Request], Awaitable[Response]]


def app(
    membership: Membership,
    routes: Sequence[BaseRoute],
    refusals: Refusals,
    limits: Mapping[str, int] | None = None,
) -> ASGIApp:
    """The listener's ASGI app: ``routes`` behind the signed door, each body at most
    :data:`MAX_BODY` bytes unless ``limits`` names its path."""
    inner = Starlette(
        routes=list(routes),
        exception_handlers={RoostError: _failure, HTTPException: _http_error},
    )
    return Signed(inner, membership, refusals, dict(limits or {}))


def route(path: str, handler: Handler, method: str = "POST") -> Route:
    return Route(path, handler, methods=[method])
