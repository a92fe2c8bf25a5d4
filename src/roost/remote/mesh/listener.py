"""The swarm listener's app: a route table behind one door that lets only members' signed
requests through, and spends next to nothing on anyone else.

Who is talking is known before a header is read: the TLS handshake checked the client's
certificate against every node the swarm knows (:mod:`roost.remote.mesh.tls`), and
:mod:`roost.remote.mesh.connections` says which certificate each connection presented. Then, in this
order, and before a byte of the body is read:

1. a connection with no certificate may ask to join (``POST /swarm/join``, a small body) and
   nothing else;
2. the certificate must be a current member's: a revoked node is refused, and is told so (the
   record of its revocation, which it can check, travels in the refusal, so it stops acting as a
   member on its next contact); a node that left is refused;
3. the signature headers must be that same member's, for this node, within the clock skew
   (:func:`roost.remote.swarm.signing.claimed`);
4. the body may be no larger than its route takes (``Content-Length`` refused before it is read;
   a chunked body is cut at the cap), and must arrive within a deadline;

and only then is the signature checked over method, path with query, recipient, timestamp,
nonce and body (:func:`roost.remote.swarm.signing.proven`). Whatever the reason a request is refused —
a stranger, a revoked node, a replay, a request re-targeted at another path, query or node, a
changed body, a clock more than 60 s off, another swarm's key, no signature at all, a path
that does not exist — the answer is the same 401 ``{"error": "refused"}`` (with the
revocation, to the revoked node itself), and the connection is closed, so the caller learns
nothing, not even whether a route or a session exists. Why is counted per code in
:class:`Refusals`, for ``rosterd nodes`` and the daemon's log, never told to the caller.

A WebSocket's opening request is signed the same way, as a ``GET`` with no body (a terminal
relayed from the node a person is logged into, :mod:`roost.remote.mesh.relay`); a refused one is
closed before it is accepted.

``POST /swarm/join`` is the one open door: the joiner is no member yet, its invite token and
its self-signed hello are its proof, and a refused token is told why (``used``, ``expired``…)
so the person holding it knows what to ask for.

Clients, not only peers: the specification serves "the swarm paths also on the Tailscale
listener". A connection with no certificate that presents this node's bearer token (the one
the loopback listener takes) may use the union and session routes a client uses there
(:func:`client_route`: ``/swarm/nodes``, ``snapshot``, ``events``, ``changes``, ``journal``,
``usage`` and ``/swarm/{node}/sessions…``), over the same TLS: the token is checked from the
headers before anything else is read, a wrong or missing one is the same refusal as any other,
and the request then goes to this node's own API app (:attr:`Signed.clients`), which applies
its own rules as for a loopback client. The membership verbs (invite, join, revoke, leave)
stay on the machine itself.

The route table is the caller's: :func:`app` takes the routes a feature serves to peers (the
hello now; a roster stream and proxied actions later), and a handler finds the member that
signed its request in ``request.state.peer``.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import re
import ssl
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence

from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from roost.base.errors import PeerRefused, RoostError
from roost.remote.mesh.connections import Connections
from roost.remote.mesh.membership import Membership
from roost.remote.swarm import canonical
from roost.remote.swarm.members import MAX_SET_DOCUMENT, Member

log = logging.getLogger("rosterd.swarm")

JOIN = "/swarm/join"
HELLO = "/swarm/hello"
CLIENT_PATHS = frozenset(
    {"/swarm/nodes", "/swarm/snapshot", "/swarm/events", "/swarm/changes", "/swarm/journal", "/swarm/usage"}
)
_ON_NODE = re.compile(r"/swarm/[^/]+/sessions(/.*)?")
MAX_BODY = canonical.MAX_DOCUMENT
JOIN_BODY = 16 * 1024
"""Bytes of a join's body: a token (2 KiB at most) and a hello that lists no members."""
BODY_S = 10.0
BODY_RATE = 256 * 1024
"""A body must arrive within :data:`BODY_S` and one more second per this many bytes it says it
has (or, with no ``Content-Length``, its route takes): a few seconds for anything but a
handoff's files."""


class Refusals(Counter[str]):
    """How many requests were refused, by the reason only this node knows."""


def target(scope: Scope) -> str:
    """The request target as the sender signed it: the raw path, and its query when it has one."""
    path = scope.get("raw_path") or scope["path"].encode("ascii", "replace")
    query = scope.get("query_string") or b""
    return (path + (b"?" + query if query else b"")).decode("latin-1")


async def _body(receive: Receive, limit: int, declared: int | None = None) -> bytes | str:
    """The whole body, or why not: ``too_large`` past ``limit``, ``body_timeout`` past its
    deadline (by the size ``declared`` in its ``Content-Length`` when it is within the limit,
    else by the limit: a small hello may not take a whole member set's time), ``gone`` when
    the client left."""
    chunks, size = [], 0
    expected = min(limit, declared) if declared is not None else limit
    try:
        async with asyncio.timeout(BODY_S + expected / BODY_RATE):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return "gone"
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    return "too_large"
                chunks.append(chunk)
                if not message.get("more_body"):
                    return b"".join(chunks)
    except TimeoutError:
        return "body_timeout"


def _declared(scope: Scope) -> int | None:
    """The body's size as ``Content-Length`` says, None when it says nothing usable."""
    value = Headers(scope=scope).get("content-length")
    return int(value) if value is not None and value.isdigit() and len(value) < 19 else None


def client_route(path: str) -> bool:
    """Whether a client with this node's bearer token may reach ``path`` on the swarm listener."""
    return path in CLIENT_PATHS or _ON_NODE.fullmatch(path) is not None


def client_certificate(scope: Scope) -> bytes | None:
    """The client certificate of a request served without :class:`Connections` (in process):
    the ASGI TLS extension's first ``client_cert_chain`` entry, PEM."""
    chain = ((scope.get("extensions") or {}).get("tls") or {}).get("client_cert_chain") or []
    return ssl.PEM_cert_to_DER_cert(chain[0]) if chain else None


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
        self.connections: Connections | None = None
        """The listener's connections, once it serves: who presented which certificate."""
        self.clients: ASGIApp | None = None
        """This node's own API app (marked as the loopback listener's), for clients with its
        bearer token; None until the daemon has made it (client requests are refused then)."""
        self.client_token: bytes | None = None

    def _certificate(self, scope: Scope) -> bytes | None:
        if self.connections is not None:
            return self.connections.certificate(scope.get("client"))
        return client_certificate(scope)

    def _limit(self, scope: Scope) -> int:
        path, method = scope.get("path", ""), scope.get("method", "GET")
        if path == JOIN:
            return JOIN_BODY
        return self.limits.get(path, 0 if method in ("GET", "HEAD") else MAX_BODY)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return
        client = scope.get("client")
        if self.connections is not None:
            self.connections.begun(client)

        async def answered(message: Message) -> None:
            await send(message)
            ended = message["type"] == "http.response.body" and not message.get("more_body")
            if (ended or message["type"] == "websocket.close") and self.connections is not None:
                self.connections.ended(client)

        if self._client(scope) and self.clients is not None:
            if self.connections is not None:
                self.connections.vouch(client)
            await self.clients(scope, receive, answered)
            return
        try:
            member = self._who(scope)
        except PeerRefused as refused:
            if refused.code == "revoked" and "revoked" in refused.extra:
                await self._last_word(scope, receive)
            await self._refuse(scope, receive, answered, refused.code or "refused", refused.extra)
            return
        if member is None:  # a join
            await self._let_in(scope, receive, answered, None)
            return
        try:
            claim = self.membership.claimed(scope.get("method", "GET"), target(scope), Headers(scope=scope))
            if claim.sender.node_id != member.node_id:
                raise PeerRefused(
                    "the request is signed by another node than its certificate's", code="wrong_node"
                )
        except PeerRefused as refused:
            await self._refuse(scope, receive, answered, refused.code or "refused")
            return
        await self._let_in(scope, receive, answered, claim)

    def _client(self, scope: Scope) -> bool:
        """A client's request: no certificate, a client route, this node's bearer token."""
        if self.clients is None or self.client_token is None or not client_route(scope.get("path", "")):
            return False
        if self._certificate(scope) is not None:
            return False
        scheme, _, presented = Headers(scope=scope).get("authorization", "").partition(" ")
        token = presented.strip().encode("latin-1", "replace")
        return scheme.lower() == "bearer" and hmac.compare_digest(token, self.client_token)

    def _who(self, scope: Scope) -> Member | None:
        """The member whose certificate this connection presented, None for a join; a refusal
        otherwise (a revoked node's carries what it is to be told)."""
        der = self._certificate(scope)
        is_join = scope["type"] == "http" and scope.get("path") == JOIN and scope.get("method") == "POST"
        if der is None:
            if is_join:
                return None
            raise PeerRefused("a request from no member", code="no_certificate")
        member = self.membership.by_certificate(der)
        if member is None:
            raise PeerRefused("a certificate of no node this one knows", code="unknown_node")
        if member.revoked:
            told = self.membership.revocation(member.node_id)
            raise PeerRefused("a revoked node", code="revoked", **({"revoked": told} if told else {}))
        return None if is_join else member

    async def _last_word(self, scope: Scope, receive: Receive) -> None:
        """A revoked node's signed hello is read (within its cap and deadline) before it is
        refused, and its records merged by the rule, which takes from it only the revocation
        of the member that revoked it (:meth:`Membership.last_word`)."""
        if scope["type"] != "http" or scope.get("path") != HELLO or scope.get("method") != "POST":
            return
        try:
            claim = self.membership.claimed("POST", target(scope), Headers(scope=scope), revoked=True)
            der = self._certificate(scope)
            if der is None or claim.sender.certificate != der:
                return
            body = await _body(receive, MAX_SET_DOCUMENT, _declared(scope))
            if isinstance(body, str):
                return
            self.membership.proven(claim, body)
            self.membership.last_word(canonical.parse(body, MAX_SET_DOCUMENT), claim.sender.node_id)
        except (PeerRefused, ValueError):
            return

    async def _let_in(self, scope: Scope, receive: Receive, send: Send, claim: object) -> None:
        if scope["type"] == "websocket":
            body: bytes | str = b""
        else:
            limit = self._limit(scope)
            declared = _declared(scope)
            too_large = declared is not None and declared > limit
            body = "too_large" if too_large else await _body(receive, limit, declared)
        if isinstance(body, str):
            if body != "gone":
                await self._refuse(scope, receive, send, body)
            return
        if claim is not None:
            try:
                peer = self.membership.proven(claim, body)  # type: ignore[arg-type]
            except PeerRefused as refused:
                await self._refuse(scope, receive, send, refused.code or "refused")
                return
            scope.setdefault("state", {})["peer"] = peer
        await self.app(scope, _replay(body, receive) if scope["type"] == "http" else receive, send)

    async def _refuse(
        self, scope: Scope, receive: Receive, send: Send, code: str, extra: Mapping[str, object] | None = None
    ) -> None:
        self.refusals[code] += 1
        log.info("refused a peer request (%s) from %s", code, (scope.get("client") or ("?",))[0])
        if scope["type"] == "http":
            told = {"revoked": extra["revoked"]} if extra and "revoked" in extra else {}
            answer = JSONResponse(
                {"error": "refused", **told}, status_code=401, headers={"connection": "close"}
            )
            await answer(scope, receive, send)
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
) -> Signed:
    """The listener's ASGI app: ``routes`` behind the signed door, each body at most
    :data:`MAX_BODY` bytes unless ``limits`` names its path (none for a ``GET``)."""
    inner = Starlette(
        routes=list(routes),
        exception_handlers={RoostError: _failure, HTTPException: _http_error},
    )
    return Signed(inner, membership, refusals, {HELLO: MAX_SET_DOCUMENT, **(limits or {})})


def route(path: str, handler: Handler, method: str = "POST") -> Route:
    return Route(path, handler, methods=[method])
