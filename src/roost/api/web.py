"""The web face's routes (see :mod:`roost.web`): its page, logging in, its terminals.

Kept beside the API's own table so the app adds them in one line; who may reach each of
them is :mod:`roost.api.gate`'s decision.
"""

from __future__ import annotations

from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute

from roost.api import page, panes, terminal

ROUTES: tuple[BaseRoute, ...] = (
    Route("/", page.index, methods=["GET"]),
    Route("/login", page.login, methods=["GET"]),
    Route("/login-link", page.login_link, methods=["POST"]),
    Route("/terminals", panes.route, methods=["GET"]),
    WebSocketRoute("/ws/terminal/{pane}", terminal.terminal),
    Mount("/static", app=page.static),
)
