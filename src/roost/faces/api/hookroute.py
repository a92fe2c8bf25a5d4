"""The hook port: ``POST /hooks/{harness}``, an agent's hook event sent over HTTP, and
``POST /hooks/{harness}/gate``, the same with the gate's event held open for an answer.

Its own listener on 127.0.0.1 (``[node] hook_port``), apart from the API's, because whom it
believes is different: no token (a token would sit in clear in the agent's settings file), and
no cookie; the kernel's word alone. The poster must be the agent process of the pane its
``X-Pane`` header names (``$TMUX_PANE``, which the agent fills in), as the kernel's TCP tables
and the pane's process tree show (:mod:`roost.actions.hookposts`). A browser's request (one
with an ``Origin``) is refused before that: no page has an agent behind it.

The answer is what Claude Code reads from an HTTP hook: 200 with an empty body (go on), or 200
with a JSON object (the gate's decision, context for the agent). A refusal is a 4xx with the
API's ``{"error": …}``; an agent that gets one shows it, and nothing changed.
"""

from __future__ import annotations

import json

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from roost.actions.hookposts import HookPosts
from roost.base.validation import too_deep
from roost.faces.api import errors
from roost.faces.api.errors import BadRequest, Forbidden, NotFound, TooLarge
from roost.faces.api.waits import watch

BODY_LIMIT = 4 * 1024 * 1024
"""Bytes an event may hold, as the command hook reads at most from its stdin."""
NESTING = 256
"""Arrays and objects an event may nest: a tool's input is the agent's to shape (an MCP tool's
arguments), so far deeper than an API body, yet short of what Python's parser recurses through."""
HARNESS_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")
PANE_HEADER = "x-pane"
GATE = "/gate"
"""The gate's URL is the hook's with this after it: the manifest's gated event is held open."""


async def hook(request: Request) -> Response:
    """One event; see the module docstring."""
    posts: HookPosts = request.app.state.posts
    harness = request.path_params["harness"]
    if not (0 < len(harness) <= 32 and HARNESS_CHARS.issuperset(harness)):
        raise NotFound(f"no harness {harness!r}")
    if "origin" in request.headers:
        raise Forbidden("refused: a browser's request; only an agent's hook may post here")
    pane = request.headers.get(PANE_HEADER, "")
    payload = await _event(request)
    if not pane:  # an agent outside tmux: no pane to stamp, as the command hook stamps none
        return Response(status_code=200)
    said = await posts.post(
        harness,
        payload,
        pane,
        request.scope.get("server"),
        request.scope.get("client"),
        watch(request),
        gate=request.url.path.endswith(GATE),
    )
    return Response(status_code=200) if said is None else JSONResponse(said)


async def _event(request: Request) -> object:
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > BODY_LIMIT:
            raise TooLarge(f"the event is larger than {BODY_LIMIT} bytes", limit=BODY_LIMIT)
    if too_deep(bytes(body), NESTING):
        raise BadRequest(f"the event nests arrays and objects more than {NESTING} deep")
    try:
        return json.loads(body.decode("utf-8", "surrogateescape") if body else "{}")
    except ValueError as error:
        raise BadRequest(f"the event is not JSON: {error}") from None


def hook_app(posts: HookPosts) -> Starlette:
    """The hook port's app: the one route, the API's error answers."""
    app = Starlette(
        routes=[
            Route("/hooks/{harness}", hook, methods=["POST"]),
            Route("/hooks/{harness}" + GATE, hook, methods=["POST"]),
        ],
        exception_handlers=errors.HANDLERS,
    )
    app.state.posts = posts
    return app
