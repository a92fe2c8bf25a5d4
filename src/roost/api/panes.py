"""``GET /terminals``: every terminal (pane) of roost's tmux server, with its session's state.

The roster only knows panes something has claimed (an agent found by the scan, a hook, a
badge), but the web app lists every terminal: a plain shell is the normal case, shown
unmarked. So a terminal comes from tmux, and its badge from the roster: ``session_key`` and
``state`` are those of the pane's current record (``rows.current``), null when it has none.
``state`` uses the web app's words (working, blocked, idle; see ARCHITECTURE.md).

The document: ``socket`` (roost's tmux server, as records name it in ``tmux.socket``) and
``terminals``, each with ``pane`` (``%N``, what ``/ws/terminal/{pane}`` takes), ``session`` and
``window`` (tmux's names), ``name`` (the pane's ``@roost-name``, else null), ``command``
(what runs in front), ``cwd`` (the pane's current directory), ``session_key``, ``state``.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.api import rows, services
from roost.api.errors import Unavailable
from roost.api.operations import operation
from roost.roster import Roster
from roost.state import words
from roost.tmux.panes import Pane, list_all_within
from roost.tmux.server import Server

_CWD = "pane_current_path"
TMUX_WAIT = 3.0
"""Seconds the listing waits for tmux: a stopped server (SIGSTOP) never answers."""


def terminals(roster: Roster, server: Server, panes: list[Pane]) -> list[dict[str, Any]]:
    """The listing, from one ``list-panes -a``."""
    found = []
    for pane in panes:
        if pane.dead:
            continue
        record = rows.current(roster, server.socket, pane.id)
        found.append(
            {
                "pane": pane.id,
                "session": pane.session,
                "window": pane.window_name,
                "name": pane.opt(words.NAME),
                "command": pane.command,
                "cwd": pane.opt(_CWD),
                "session_key": record.session_key if record else None,
                "state": rows.STATE_OF_ACTIVITY.get(record.activity) if record else None,
            }
        )
    return found


@operation("every live pane of roost's tmux server", answers={200: ("Terminals", "the panes")}, fails=(503,))
async def route(request: Request) -> JSONResponse:
    daemon = services.of(request)
    if daemon.tmux is None:
        return JSONResponse({"socket": None, "terminals": []})
    try:
        panes = await list_all_within(daemon.tmux, TMUX_WAIT, (words.NAME, _CWD))
    except TimeoutError:
        raise Unavailable(f"roost's tmux server did not answer within {TMUX_WAIT:.0f} s") from None
    listing = terminals(daemon.live.roster, daemon.tmux, panes)
    return JSONResponse({"socket": daemon.tmux.socket, "terminals": listing})
