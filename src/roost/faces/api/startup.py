"""The app while the daemon starts: the roster's snapshot served from the moment it is rebuilt,
every other request held until the whole app is built, then handed to it.

Most of the daemon's start is importing what its faces need (the MCP server, the request
models, the swarm); none of that is needed to read the roster. So the daemon binds its
listeners, rebuilds, serves ``GET /snapshot`` through the same gates as the whole app (the
bearer check, the web gate), and builds the rest while it answers. A request for anything else
waits for the whole app instead of being refused: nobody sees the daemon half started, only a
first answer that comes a little later.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from roost.faces.api import errors, reads
from roost.faces.api.auth import BearerAuth
from roost.faces.api.context import Context
from roost.faces.api.gate import WebGate
from roost.faces.api.segments import Segments

EARLY = frozenset({"/snapshot"})
"""What is served before the whole app is built: the rebuilt roster, and nothing that acts."""


def guarded(routes: Sequence[BaseRoute], context: Context, mounts: Sequence[Route] = ()) -> Starlette:
    """Routes behind the gates every listener's requests pass (see :func:`roost.faces.api.app.create_app`)."""
    app = Starlette(
        routes=[*routes, *mounts],
        middleware=[
            Middleware(Segments),
            Middleware(WebGate, logins=context.logins, strict=frozenset(route.path for route in mounts)),
            Middleware(BearerAuth, token=context.token),
        ],
        exception_handlers=errors.HANDLERS,
    )
    app.state.context = context
    app.state.mounts = frozenset(route.path for route in mounts)
    return app


def early(context: Context) -> Starlette:
    """The roster's snapshot behind the same gates, for a context whose door holds only the roster."""
    return guarded([Route(path, reads.snapshot, methods=["GET"]) for path in EARLY], context)


def hooks_early() -> Starlette:
    """The hook port before the whole daemon is built: no route of its own, so every hook waits."""
    return Starlette(exception_handlers=errors.HANDLERS)


class Opening:
    """ASGI app: the early app's routes until :meth:`open` hands over the whole app; any other
    request waits for that."""

    def __init__(self, first: ASGIApp) -> None:
        self._first = first
        self._whole: ASGIApp | None = None
        self._opened = asyncio.Event()

    def open(self, whole: ASGIApp) -> None:
        self._whole = whole
        self._opened.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        whole = self._whole
        if whole is None:
            if scope["type"] == "http" and scope["method"] in ("GET", "HEAD") and scope["path"] in EARLY:
                await self._first(scope, receive, send)
                return
            await self._opened.wait()
            whole = self._whole
            assert whole is not None
        await whole(scope, receive, send)
