"""Who may call the API: unix-socket peers, and TCP clients that present the loopback token.

The unix socket is 0600 in a 0700 directory, so only the owner can connect: its peers are
trusted. Each listener marks the requests it accepts with how they came in; a request with
no mark is treated as TCP, so a listener wired without :func:`via` fails closed.
"""

from __future__ import annotations

import hmac

from starlette.types import ASGIApp, Receive, Scope, Send

from roost.base.errors import Unauthorized
from roost.faces.api import errors

PEER = "rosterd.peer"
UNIX, TCP, SWARM = "unix", "tcp", "swarm"
"""How a request came in: the unix socket, the loopback listener, or another node of the swarm
(an act its owner runs through the app in-process, :mod:`roost.faces.api.proxy`, after the swarm
listener's signed door let it in: no listener marks a request so)."""
TRUSTED = (UNIX, SWARM)
VOUCHED = "rosterd.vouched"
"""Set by an outer gate (the web face's session cookie, a public page): no bearer needed."""


def via(app: ASGIApp, peer: str) -> ASGIApp:
    """The app as one listener serves it: every request marked with how it arrived."""

    async def marked(scope: Scope, receive: Receive, send: Send) -> None:
        await app({**scope, PEER: peer}, receive, send)

    return marked


def who(scope: Scope) -> tuple[str, str]:
    """Who calls and from where, as the journal keeps it: the unix socket's peer is the user
    (the CLI says so in its User-Agent), a cookie is the web app, a bearer token a tool."""
    if scope.get(PEER) == UNIX:
        agent = dict(scope.get("headers", ())).get(b"user-agent", b"")
        return "local user", "cli" if agent == b"rosterd-cli" else "api"
    if scope.get(VOUCHED):
        return "browser", "web"
    return "token holder", "api"


class BearerAuth:
    """ASGI middleware: a TCP request needs ``Authorization: Bearer <token>``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope.get(PEER) in TRUSTED or scope.get(VOUCHED):
            await self.app(scope, receive, send)
            return
        problem = self._problem(scope)
        if problem is None:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket" and "websocket.http.response" not in scope.get("extensions", {}):
            await send({"type": "websocket.close", "code": 1008, "reason": problem})
            return
        # On a WebSocket, Starlette's Response speaks the ASGI denial-response extension.
        await errors.answer(Unauthorized(problem))(scope, receive, send)

    def _problem(self, scope: Scope) -> str | None:
        header = dict(scope.get("headers", ())).get(b"authorization")
        if header is None:
            return "a bearer token is required (see loopback.token beside rosterd.toml)"
        scheme, _, presented = header.partition(b" ")
        if scheme.lower() != b"bearer" or not hmac.compare_digest(presented.strip(), self._token):
            return "the bearer token is wrong"
        return None
