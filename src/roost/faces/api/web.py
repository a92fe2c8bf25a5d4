"""The web face's routes (see :mod:`roost.faces.web`): its page, logging in, its terminals.

Kept beside the API's own table so the app adds them in one line; who may reach each of
them is :mod:`roost.faces.api.gate`'s decision.
"""

from __future__ import annotations

from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute

from roost.faces.api import launcher, page, panes, pushroutes, pwa, relayed, segments, tail, terminal

ROUTES: tuple[BaseRoute, ...] = (
    Route("/", page.index, methods=["GET"]),
    Route("/login", page.login, methods=["GET"]),
    Route("/login-link", page.login_link, methods=["POST"]),
    Route("/manifest.webmanifest", pwa.manifest, methods=["GET"]),
    Route("/sw.js", pwa.service_worker, methods=["GET"]),
    Route("/terminals", panes.route, methods=["GET"]),
    Route(segments.path("/terminals/{pane}/tail"), tail.route, methods=["GET"]),
    Route("/launcher", launcher.listing, methods=["GET"]),
    Route("/launch", launcher.launch, methods=["POST"]),
    Route("/push/vapid-key", pushroutes.vapid_key, methods=["GET"]),
    Route("/push/subscribe", pushroutes.subscribe, methods=["POST"]),
    Route("/push/subscribe", pushroutes.unsubscribe, methods=["DELETE"]),
    Route("/push/viewing", pushroutes.viewing, methods=["POST"]),
    Route(segments.path("/sessions/{key}/seen"), pushroutes.seen, methods=["POST"]),
    WebSocketRoute(segments.path("/ws/terminal/{pane}"), terminal.terminal),
    WebSocketRoute(segments.path("/ws/swarm/{node}/terminal/{key}"), relayed.terminal),
    Mount("/static", app=page.static),
)
