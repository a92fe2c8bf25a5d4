"""The Starlette app: every route in one table, built around the context it is given.

The shortest use (the daemon does this once per listener)::

    app = create_app(Context(Door(live), token, started_at=time.time()))
    uvicorn.Server(uvicorn.Config(auth.via(app, auth.UNIX), ...))
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from roost.faces.api import (
    budgets,
    claims,
    close,
    fork,
    headless,
    input,
    ledger,
    permissions,
    prompt,
    proxy,
    reads,
    rows,
    segments,
    streams,
    swarm,
    swarmledger,
    swarmroster,
    tail,
    waits,
    webhooks,
)
from roost.faces.api.context import Context
from roost.faces.api.operations import operation
from roost.faces.api.startup import guarded
from roost.faces.api.web import ROUTES as WEB_ROUTES


@operation("this document", answers={200: ("application/json", "OpenAPI 3.1")})
async def _openapi(request: Request) -> Response:
    """``GET /openapi.json``: built from the routes' declarations on the first request, so its
    models load then and not at every start."""
    from roost.faces.api import openapi

    return await openapi.route(request)


SESSION_VERBS = {
    proxy.READ: ("GET", "", reads.session),
    "spawn": ("POST", "/spawn", headless.spawn),
    "permission": ("POST", "/permission", permissions.permission),
    "cancel": ("POST", "/cancel", headless.cancel),
    "suspend": ("POST", "/suspend", headless.suspend),
    "resume": ("POST", "/resume", headless.resume),
    "stop": ("POST", "/stop", headless.stop),
    "handoff": ("POST", "/handoff", headless.handoff),
    "close": ("POST", "/close", close.close),
    "fork": ("POST", "/fork", fork.fork),
    "explain": ("GET", "/explain", reads.explain),
    "tail": ("GET", "/tail", tail.session),
    "name": ("POST", "/name", claims.name),
    "input": ("POST", "/input", input.raw_input),
    "prompt": ("POST", "/prompt", prompt.prompt),
    "wait": ("POST", "/wait", waits.wait),
}
"""Every route on one session, by the verb an act names it with (``docs/swarm.md``): each is
served for this node's sessions and forwarded for another node's (:mod:`roost.faces.api.proxy`),
at ``/sessions/{key}…`` and at ``/swarm/{node}/sessions/{key}…``."""
VERBS = {
    proxy.START: ("POST", ""),
    **{verb: (method, suffix) for verb, (method, suffix, _) in SESSION_VERBS.items()},
}
"""What a forwarded act may ask of this node: a verb's method and path after ``/sessions/{key}``."""

ROUTES = (
    Route("/snapshot", reads.snapshot, methods=["GET"]),
    Route("/events", streams.events, methods=["GET"]),
    Route("/changes", streams.changes, methods=["GET"]),
    Route("/sessions", headless.start, methods=["POST"]),
    *(
        Route(segments.path(f"/sessions/{{key}}{suffix}"), proxy.proxied(verb, endpoint), methods=[method])
        for verb, (method, suffix, endpoint) in SESSION_VERBS.items()
    ),
    Route(
        segments.path("/swarm/{node}/sessions"), proxy.on_node(proxy.START, headless.start), methods=["POST"]
    ),
    *(
        Route(
            segments.path(f"/swarm/{{node}}/sessions/{{key}}{suffix}"),
            proxy.on_node(verb, endpoint),
            methods=[method],
        )
        for verb, (method, suffix, endpoint) in SESSION_VERBS.items()
    ),
    Route("/agents", rows.agents, methods=["GET"]),
    Route(segments.path("/agents/{session}"), rows.agent, methods=["GET"]),
    Route("/claim", claims.claim, methods=["POST"]),
    Route("/gate", permissions.gate, methods=["POST"]),
    Route("/gates", permissions.gates, methods=["GET"]),
    Route("/register", claims.register, methods=["POST"]),
    Route("/status", reads.status, methods=["GET"]),
    Route("/openapi.json", _openapi, methods=["GET"]),
    Route("/hooks", webhooks.register, methods=["POST"]),
    Route("/hooks", webhooks.listing, methods=["GET"]),
    Route(segments.path("/hooks/{id}"), webhooks.delete, methods=["DELETE"]),
    Route("/journal", ledger.journal, methods=["GET"]),
    Route("/usage", ledger.usage, methods=["GET"]),
    Route("/budgets", budgets.listing, methods=["GET"]),
    Route("/budgets", budgets.set_limit, methods=["POST"]),
    Route("/budgets/clear", budgets.clear, methods=["POST"]),
    Route("/budgets/lift", budgets.lift, methods=["POST"]),
    Route("/swarm/nodes", swarm.nodes, methods=["GET"]),
    Route("/swarm/snapshot", swarmroster.snapshot, methods=["GET"]),
    Route("/swarm/events", swarmroster.events, methods=["GET"]),
    Route("/swarm/changes", swarmroster.changes, methods=["GET"]),
    Route("/swarm/journal", swarmledger.journal, methods=["GET"]),
    Route("/swarm/usage", swarmledger.usage, methods=["GET"]),
    Route("/swarm/invite", swarm.invite, methods=["POST"]),
    Route("/swarm/join", swarm.join, methods=["POST"]),
    Route("/swarm/revoke", swarm.revoke, methods=["POST"]),
    Route("/swarm/leave", swarm.leave, methods=["POST"]),
)


def create_app(context: Context, mounts: Sequence[Route] = ()) -> Starlette:
    """One app for every listener; each listener marks its requests (see :mod:`roost.faces.api.auth`).

    ``mounts`` are endpoints of another face the daemon serves on the same listeners (the MCP
    server at ``/mcp``): behind the same bearer check, and behind the web gate's Origin check
    for every method, since no browser page has any business there."""
    return guarded([*ROUTES, *WEB_ROUTES], context, mounts)
