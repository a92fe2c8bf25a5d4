"""``GET /terminals``: every terminal (pane) of roost's tmux server, with its session's state.

The roster only knows panes something has claimed (an agent found by the scan, a hook, a
badge), but the web app lists every terminal: a plain shell is the normal case, shown
unmarked. So a terminal comes from tmux, and its badge from the roster
(:func:`roost.actions.terminals.terminals`): ``session_key`` and ``state`` are those of the
pane's current record, null when it has none. ``state`` uses the web app's words (working,
blocked, idle; see ARCHITECTURE.md).

The document: ``socket`` (roost's tmux server, as records name it in ``tmux.socket``) and
``terminals``, each with ``pane`` (``%N``, what ``/ws/terminal/{pane}`` takes), ``session`` and
``window`` (tmux's names), ``name`` (the pane's ``@roost-name``, else null), ``command``
(what runs in front), ``cwd`` (the pane's current directory), ``session_key``, ``state``.
"""

from __future__ import annotations

import dataclasses

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.actions import terminals
from roost.faces.api import context
from roost.faces.api.operations import operation


@operation("every live pane of roost's tmux server", answers={200: ("Terminals", "the panes")}, fails=(503,))
async def route(request: Request) -> JSONResponse:
    door = context.of(request).door
    listing = [dataclasses.asdict(terminal) for terminal in await terminals.terminals(door)]
    return JSONResponse({"socket": door.socket, "terminals": listing})
