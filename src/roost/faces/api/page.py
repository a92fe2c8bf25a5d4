"""The web app's page, its static files, and logging a browser in.

- ``GET /``: the page (a browser without a session cookie is sent to ``/login`` first, by
  :mod:`roost.faces.api.gate`).
- ``GET /login?token=T``: trades a one-time login token for a session cookie and redirects to
  the page; a used or unknown token gets 401 and the "log in with the link" page. Without a
  token: that page, or the app when the browser is already logged in.
- ``POST /login-link``: a new one-time link, ``{"url": …}``, for a caller that already holds
  the bearer token or the unix socket (the link rosterd printed at start works once); 503
  while the loopback listener is off, since no browser could follow the link.
- ``/static/…``: the page's modules, styles and vendored xterm.js; public, they hold no secret.
"""

from __future__ import annotations

import html
import re
import shlex
from importlib import resources
from pathlib import Path
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.staticfiles import StaticFiles

from roost.base import paths
from roost.base.errors import Unavailable
from roost.faces.api import context
from roost.faces.api.gate import session_cookie
from roost.faces.api.logins import cookie_name
from roost.faces.api.operations import operation, parameter

STATIC = Path(str(resources.files("roost.faces.web") / "static"))
NO_STORE = {"Cache-Control": "no-store"}
LOGIN_HEADERS = {**NO_STORE, "Referrer-Policy": "no-referrer"}
"""A login address holds its one-time token: no page it leads to may pass it on as a Referer."""
PAGE_HEADERS = {
    **LOGIN_HEADERS,
    # Only this daemon's own files and sockets; never inside another site's frame, where a
    # page could trick a person into typing into a terminal. xterm.js sets inline styles.
    "Content-Security-Policy": (
        "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
}

_LOGIN_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Roost: log in</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/static/style.css"></head>
<body class="login"><main>
<h1>Roost</h1>
<p class="why">{why}</p>
<p>Open the login link <code>rosterd</code> printed when it started (each link works once).
For a new one, ask the daemon on its socket:</p>
<pre>curl -s --unix-socket {socket} -X POST http://rosterd/login-link</pre>
</main></body></html>
"""

_SESSION_KEY = re.compile(r"[A-Za-z0-9:._%@-]{1,200}")


def login_page(request: Request, why: str, status: int) -> HTMLResponse:
    """The "log in with the link" page; its command for a new link names the socket this daemon
    listens on, wherever that is (``$XDG_RUNTIME_DIR/roost``, ``/tmp/roost-UID``, ``$ROSTERD_SOCKET``)."""
    listen = context.of(request).facts.get("listen", {})
    unix = listen.get("unix") if isinstance(listen, dict) else None
    socket = shlex.quote(unix or paths.api_socket_path())
    page = _LOGIN_PAGE.format(why=html.escape(why), socket=html.escape(socket))
    return HTMLResponse(page, status_code=status, headers=PAGE_HEADERS)


@operation(
    "the web app's page (a browser without a session cookie is sent to /login)",
    answers={200: ("text/html", "the page"), 303: (None, "not logged in: to /login")},
)
async def index(_request: Request) -> Response:
    return FileResponse(STATIC / "index.html", headers=PAGE_HEADERS)


def _landing(request: Request) -> str:
    """Where a login lands: the page, or one session in it (``rosterd open KEY``).

    Only a session-key-shaped value is passed on, and only as a query on ``/``: a login link
    must never be usable to send the browser anywhere else.
    """
    wanted = request.query_params.get("open")
    if wanted and _SESSION_KEY.fullmatch(wanted):
        return "/?" + urlencode({"open": wanted})
    return "/"


@operation(
    "the login page; with ?token= a one-time login that sets the session cookie",
    answers={
        200: ("text/html", "the login page"),
        303: (None, "logged in: on to the app"),
        401: ("text/html", "a link used already, or not one this daemon gave"),
    },
    params=(
        parameter("query", "token", {"type": "string"}),
        parameter("query", "open", {"type": "string"}, "a session to show once logged in"),
    ),
)
async def login(request: Request) -> Response:
    logins = context.of(request).logins
    token = request.query_params.get("token")
    if token is None:
        if logins.valid(session_cookie(request.scope, request.headers)):
            return RedirectResponse(_landing(request), status_code=303, headers=LOGIN_HEADERS)
        return login_page(request, "Log in with the link.", 200)
    if not logins.redeem(token):
        return login_page(request, "That login link was used already, or is not one this daemon gave.", 401)
    response = RedirectResponse(_landing(request), status_code=303, headers=LOGIN_HEADERS)
    server = request.scope.get("server") or ("", 0)
    response.set_cookie(
        cookie_name(server[1]),
        logins.cookie(),
        max_age=logins.lifetime,
        path="/",
        httponly=True,
        samesite="strict",
    )
    return response


@operation(
    "a one-time login address for a browser (503 while the loopback listener is off: no browser "
    "could follow it)",
    answers={200: ("LoginLink", "the link")},
    fails=(503,),
)
async def login_link(request: Request) -> JSONResponse:
    daemon = context.of(request)
    listen = daemon.facts.get("listen", {})
    loopback = listen.get("loopback") if isinstance(listen, dict) else None
    off = (listen.get("off") or {}).get("loopback") if isinstance(listen, dict) else None
    if off:
        raise Unavailable(f"the web app is off: its loopback listener is off ({off})")
    origin = f"http://{loopback}" if loopback else str(request.base_url).rstrip("/")
    return JSONResponse({"url": daemon.logins.link(origin)}, headers=NO_STORE)


static = StaticFiles(directory=STATIC)
