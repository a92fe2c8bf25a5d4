"""``GET /terminals/{pane}/tail?lines=N``: the last few lines a terminal shows, as plain text;
``GET /sessions/{key}/tail``: the same for a session's pane, on any node of the swarm.

The phone's card deck shows each session's last lines under its badge; a live terminal per
card would cost a tmux client each, so a card reads the screen once instead. The lines are
the pane's visible screen (``capture-pane``, wrapped lines joined, no escape sequences), the
last ``N`` that hold something (1 to 20, default 3), oldest first
(:func:`roost.actions.terminals.tail`).

The session route is a session verb like ``read`` (:data:`roost.faces.api.app.SESSION_VERBS`), so it
is forwarded to the node that owns the pane (``/swarm/{node}/sessions/%N/tail`` for another
node's plain shell, which no roster holds): another node's card shows its last lines too. A
forwarded act carries no query, so it reads the default three lines, everywhere alike.
"""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.actions import terminals
from roost.faces.api import context
from roost.faces.api.errors import BadRequest
from roost.faces.api.operations import KEY, operation, parameter

DEFAULT_LINES = 3
MAX_LINES = 20
_PANE = re.compile(r"%[0-9]+")


def _count(text: str | None) -> int:
    if text is None:
        return DEFAULT_LINES
    if not (text.isascii() and text.isdigit() and len(text) <= 2 and 0 < int(text) <= MAX_LINES):
        raise BadRequest(f"lines must be a whole number from 1 to {MAX_LINES}")
    return int(text)


@operation(
    f"a pane's last non-blank screen lines (lines: 1 to {MAX_LINES}, default {DEFAULT_LINES})",
    answers={200: ("Tail", "the lines")},
    fails=(400, 404, 503),
    params=(
        parameter(
            "path", "pane", {"type": "string", "pattern": "^%[0-9]+$"}, "a pane of roost's tmux server, %N"
        ),
        parameter("query", "lines", {"type": "integer", "minimum": 1, "maximum": MAX_LINES}),
    ),
)
async def route(request: Request) -> JSONResponse:
    pane = request.path_params["pane"]
    count = _count(request.query_params.get("lines"))
    if not _PANE.fullmatch(pane):
        raise BadRequest("pane must be a pane id, %N")
    lines = await terminals.tail(context.of(request).door, pane, count)
    return JSONResponse({"pane": pane, "lines": lines})


@operation(
    f"the last {DEFAULT_LINES} non-blank screen lines of a session's pane (KEY may be a pane, %N)",
    answers={200: ("Tail", "the lines")},
    fails=(404, 409, 503),
    params=(KEY,),
)
async def session(request: Request) -> JSONResponse:
    door = context.of(request).door
    pane = door.pane(request.path_params["key"])
    lines = await terminals.tail(door, pane, DEFAULT_LINES)
    return JSONResponse({"pane": pane, "lines": lines})
