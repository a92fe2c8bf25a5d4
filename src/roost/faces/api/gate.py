"""The web face's door on the loopback listener: session cookies, Origin checks, public pages.

It sits in front of :class:`roost.faces.api.auth.BearerAuth` and decides three things about a TCP
request (unix-socket peers pass untouched):

- Origin: a WebSocket or a state-changing request (anything but GET, HEAD, OPTIONS) that names
  an Origin must name this daemon's own (``http://127.0.0.1:PORT`` or ``http://localhost:PORT``),
  and one that relies on the cookie must name it at all. Browsers always send Origin there, so
  this is what stops another site's page from driving a terminal through a logged-in browser.
  A script with the bearer token sends no Origin and needs none. On a strict path (the MCP
  endpoint the daemon mounts) a safe method's Origin is checked too.
- Who: a valid session cookie vouches for the request (bearer auth is then skipped); so do the
  public paths (the login page, the static files, the app's manifest and service worker,
  which hold no secret). Everything else goes on to the bearer check, which answers 401.
- Where to: a browser opening the page without a cookie is sent to the login page, and a
  WebSocket without either credential gets a plain 401 instead of an opaque close.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.requests import cookie_parser
from starlette.responses import RedirectResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from roost.faces.api import auth, errors
from roost.faces.api.logins import Logins, cookie_name

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
PUBLIC = frozenset({"/login", "/favicon.ico", "/manifest.webmanifest", "/sw.js"})
STATIC = "/static/"
PAGE = "/"
LOGIN_PAGE = "/login"


def own_origins(scope: Scope) -> frozenset[str]:
    """The origins a page served by this listener has: its port on 127.0.0.1 and localhost."""
    server = scope.get("server") or ("127.0.0.1", 0)
    port = server[1]
    return frozenset({f"http://127.0.0.1:{port}", f"http://localhost:{port}"})


def session_cookie(scope: Scope, headers: Headers) -> str | None:
    server = scope.get("server") or ("", 0)
    return cookie_parser(headers.get("cookie", "")).get(cookie_name(server[1]))


class WebGate:
    """ASGI middleware; see the module docstring for what it lets through and why."""

    def __init__(self, app: ASGIApp, logins: Logins, strict: frozenset[str] = frozenset()) -> None:
        self.app = app
        self.logins = logins
        self.strict = strict
        """Paths whose every request, whatever its method, must name this daemon's Origin if any."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope.get(auth.PEER) in auth.TRUSTED:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        bearer = "authorization" in headers
        by_cookie = not bearer and self.logins.valid(session_cookie(scope, headers))
        problem = self._origin_problem(scope, headers, by_cookie, scope["path"] in self.strict)
        if problem is not None:
            await self._refuse(scope, receive, send, 403, problem)
            return
        path = scope["path"]
        if by_cookie or path in PUBLIC or path.startswith(STATIC):
            await self.app({**scope, auth.VOUCHED: True}, receive, send)
            return
        if not bearer and scope["type"] == "http" and path == PAGE:
            await RedirectResponse(LOGIN_PAGE, status_code=303)(scope, receive, send)
            return
        if not bearer and scope["type"] == "websocket":
            await self._refuse(scope, receive, send, 401, "log in first: open the login link rosterd printed")
            return
        await self.app(scope, receive, send)

    @staticmethod
    def _origin_problem(scope: Scope, headers: Headers, by_cookie: bool, strict: bool) -> str | None:
        if scope["type"] == "http" and scope["method"] in SAFE_METHODS and not strict:
            return None
        origin = headers.get("origin")
        if origin is None:
            return "this request needs an Origin header" if by_cookie else None
        if origin not in own_origins(scope):
            return f"the Origin {origin!r} is not this daemon's"
        return None

    @staticmethod
    async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, message: str) -> None:
        # On a WebSocket, Starlette's Response speaks the ASGI denial-response extension.
        if scope["type"] == "http" or "websocket.http.response" in scope.get("extensions", {}):
            await errors.response(status, message)(scope, receive, send)
            return
        await send({"type": "websocket.close", "code": 1008, "reason": message})
