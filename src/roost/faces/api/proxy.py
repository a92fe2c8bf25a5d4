"""Session paths for sessions another node owns: forwarded to the owner, answered as it answers.

Every ``/sessions/{key}…`` route is served through :func:`proxied`: when the door finds the
session in the third lane (owned by another node, :mod:`roost.actions.sessions`), the request
goes to its owner as one :class:`~roost.actions.remote.Act` (the verb, the body as sent, who
asks) and the owner's status and body come back unchanged; otherwise the route runs here as
it always did. The same routes are also under ``/swarm/{node}/sessions/…`` (:func:`on_node`),
which names the owner outright: the key is sent to that node as typed, for it to resolve
among its own sessions (a name no roster exchange has brought here yet, a pid on that node).
Both are on the unix socket and the loopback listener only, never the swarm listener.

On the owner, :func:`dispatcher` runs a forwarded act through this very app, marked
(:data:`FORWARDED`) with who asked and through which node: the same route, body model, fences
and answers as for a caller here. A marked request names this node's sessions only, found by
this node's own rules (a name is the one session of that name here, whatever the peers hold),
and one naming a key of another node is refused (``not_owner``): it is never forwarded again.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message

from roost.actions import remote
from roost.actions.remote import API, Act, Dispatch, Reply, Through
from roost.actions.sessions import Door, resolve
from roost.base.errors import PeerUnreachable, RoostError
from roost.faces.api import auth, context
from roost.faces.api.errors import BadRequest, NotFound, TooLarge
from roost.faces.api.operations import of, parameter
from roost.remote.swarm import union

FORWARDED = "rosterd.forwarded"
"""The scope key of a request another node forwarded: its :class:`Through`."""
START = "start"
READ = "read"
LIMIT = 900_000
"""Bytes of a body this node forwards: the act around it stays within a peer request's MiB."""
NODE = parameter(
    "path",
    "node",
    {"type": "string", "minLength": 1},
    "the node that owns the session: a member of this node's swarm by its id or name (this node's own too)",
)

Handler = Callable[[Request], Awaitable[Response]]


def through(request: Request) -> Through | None:
    """Who asked on another node, when this request was forwarded here."""
    found = request.scope.get(FORWARDED)
    return found if isinstance(found, Through) else None


def who(request: Request) -> tuple[str, str]:
    """Who acts and from where, for the journal: as this node's listener saw the caller, or,
    for a forwarded request, as the node it came through said."""
    forwarded = through(request)
    if forwarded is not None:
        return forwarded.by, forwarded.via
    return auth.who(request.scope)


def _declared(endpoint: Handler, handler: Handler, node: bool) -> Handler:
    """``handler`` carrying ``endpoint``'s declaration (with the ``node`` parameter for the
    ``/swarm/{node}`` twin), so the OpenAPI document lists it as the route it serves."""
    declared = of(endpoint)
    if declared is not None:
        params = (NODE, *declared.params) if node else declared.params
        fails = tuple(sorted({*declared.fails, 502}))
        handler.operation = replace(declared, params=params, fails=fails)  # type: ignore[attr-defined]
    handler.__doc__ = endpoint.__doc__
    return handler


def proxied(verb: str, endpoint: Handler) -> Handler:
    """``endpoint`` for a session of this node; for another node's, one act to its owner."""

    async def handler(request: Request) -> Response:
        return await _serve(request, verb, endpoint)

    return _declared(endpoint, handler, node=False)


async def _serve(request: Request, verb: str, endpoint: Handler) -> Response:
    door = context.of(request).door
    key = request.path_params["key"]
    if through(request) is not None:
        return await _as_owner(request, door, key, endpoint)
    try:
        found = door.find(key)
    except RoostError:
        return await endpoint(request)  # the route refuses it, in its own order
    if found.owner is None:
        return await endpoint(request)
    return await _forward(request, door, found.owner, verb, found.key)


async def _as_owner(request: Request, door: Door, key: str, endpoint: Handler) -> Response:
    """A forwarded request: the key is found among this node's sessions by this node's own rules
    (a caller that named the node meant its session of that name), and the route is given the
    exact key; a key of another node is refused, never forwarded again."""
    remote.refuse_elsewhere(key, door.live.roster.node_id)
    try:
        exact = resolve(door.live.roster, key)
    except RoostError:
        return await endpoint(request)  # a pane id, or the route's own refusal
    request.scope["path_params"] = {**request.path_params, "key": exact}
    return await endpoint(request)


def on_node(verb: str, endpoint: Handler) -> Handler:
    """``endpoint`` under ``/swarm/{node}``: here when ``node`` is this node, else one act to it."""

    async def handler(request: Request) -> Response:
        door = context.of(request).door
        roster = door.live.roster
        owner = remote.node_named(door.forwarder, roster.node_id, roster.node, request.path_params["node"])
        if owner == roster.node_id:
            return await endpoint(request)  # this node's own sessions, and no other's
        return await _forward(request, door, owner, verb, request.path_params.get("key"))

    return _declared(endpoint, handler, node=True)


async def _forward(request: Request, door: Door, owner: str, verb: str, session: str | None) -> Response:
    body = await request.body()
    if len(body) > LIMIT:
        raise TooLarge(f"a body forwarded to another node is at most {LIMIT} bytes", limit=LIMIT)
    try:
        text = body.decode()
    except UnicodeDecodeError:
        raise BadRequest("the body is not UTF-8 JSON") from None
    by, via = who(request)
    act = Act(session, API, verb, text, by, via, remote.waiting(text, time.time()))
    try:
        reply = await remote.forward(door.forwarder, owner, act)
    except PeerUnreachable:
        kept = _as_last_heard(door, owner, session) if verb == READ else None
        if kept is None:
            raise
        return JSONResponse(kept)
    return Response(reply.body, reply.status, media_type="application/json")


def _as_last_heard(door: Door, owner: str, session: str | None) -> dict[str, Any] | None:
    """A read of a session whose owner cannot be reached: its record as that owner's last frame
    had it, marked with how the owner stands and how long ago it was heard (as the union serves
    it), since nothing waits on a peer and what is known is served; None when nothing is."""
    peer = door.peers.get(owner) if door.peers is not None and session is not None else None
    if peer is None:
        return None
    found = peer.records.get(session or "")
    if found is None:
        named = [r for r in peer.records.values() if r.name == session and r.liveness != "ended"]
        found = named[0] if len(named) == 1 else None
    if found is None:
        return None
    return union.served(found, peer.state(), peer.age_ms(time.time()))


def dispatcher(app: ASGIApp, verbs: Mapping[str, tuple[str, str]]) -> Dispatch:
    """The owner's side: a forwarded act run through ``app`` (this node's API) as the route
    ``verbs`` names for it (method, and the path after ``/sessions/{key}``)."""

    async def dispatch(act: Act, came: Through, request: Request) -> Reply:
        if act.verb not in verbs:
            raise NotFound(f"no session verb {act.verb!r} on this node", code="no_such_verb")
        method, suffix = verbs[act.verb]
        if (act.session is None) != (act.verb == START):
            raise BadRequest("a start names no session and every other verb names one", field="session")
        path = "/sessions" if act.session is None else f"/sessions/{act.session}{suffix}"
        raw = "/sessions" if act.session is None else f"/sessions/{quote(act.session, safe='')}{suffix}"
        body = act.body.encode()
        scope: dict[str, Any] = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": path,
            "raw_path": raw.encode("ascii"),
            "query_string": b"",
            "root_path": "",
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            "client": None,
            "server": request.scope.get("server"),
            auth.PEER: auth.SWARM,
            FORWARDED: came,
        }
        sent = False

        async def receive() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await request.receive()  # the forwarding node hanging up ends a wait here

        status, chunks = 500, []

        async def send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await app(scope, receive, send)
        return Reply(status, b"".join(chunks))

    return dispatch
