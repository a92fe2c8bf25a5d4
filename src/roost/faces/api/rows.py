"""Status rows: the roster as ``roost api`` and the web app see it, one row per terminal.

Roost labels a shell PTY (a pane of roost's tmux server) with the state of whatever agent
runs in it, so a row is about a pane, named by its pane id (``%N``): the PTY stays when the
agent in it restarts, and the new process is a new *occupant* of the same session. The row
of a pane is its newest live record; a pane with no record, or whose record has no activity
yet, has no row (an unlabelled terminal is the normal case, not a failure).

A row has exactly these eleven fields (the machine projection, ``--json``):

==================  =====================================================================
session_id          the pane, ``%N``
agent_id            the harness (``claude``, ``codex``…), null when unknown
state               ``working``, ``blocked`` or ``idle`` (error and done read as idle)
message             what a blocked agent waits on, or why a turn failed; null otherwise
status_epoch        the daemon's roster lifetime (an integer)
occupant_id         the process incarnation the row describes (an integer)
source              ``integration`` when the state came from the agent itself (launcher,
                    ACP, integration report or hook), ``screen`` when read off its screen,
                    null (``legacy``) when from anything else (session files)
revision            the record's revision: bumps on every visible change of this occupant
completed_revision  the revision at which the last turn ended, 0 before the first
updated_at          when the state was observed, in milliseconds since the Unix epoch
promptable          true only for a complete integration identity (below)
==================  =====================================================================

A complete integration identity is a live record in a pane whose harness and harness session
id are both known and whose state came from an integration-class source: the process it
names was observed by the scan and the state was reported by the agent, not inferred from
its screen. Only such a row may receive a fenced prompt; the others stay readable. Which
record occupies a pane, and whether it is such an identity, is :mod:`roost.actions.occupants`'
to say, for the fenced prompt and the MCP server as for these rows.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.actions.occupants import (
    INTEGRATION_CLASS,
    SCREEN_CLASS,
    STATE_OF_ACTIVITY,
    current,
    occupants,
    pane_of,
    promptable,
    source_class,
)
from roost.actions.sessions import Door
from roost.faces.api import context
from roost.faces.api.errors import NotFound
from roost.faces.api.operations import SESSION, operation
from roost.truth.roster import Roster, records
from roost.truth.roster.records import Record

__all__ = [
    "INTEGRATION_CLASS",
    "SCREEN_CLASS",
    "STATE_OF_ACTIVITY",
    "current",
    "every",
    "message",
    "occupants",
    "pane_of",
    "promptable",
    "row",
    "session_row",
    "source_class",
]


def message(record: Record) -> str | None:
    pending = record.pending or {}
    if record.activity == records.NEEDS_ATTENTION and isinstance(pending.get("summary"), str):
        return str(pending["summary"])
    return record.error_reason


def row(roster: Roster, socket: str | None, record: Record) -> dict[str, Any] | None:
    """The record as a status row, or None when it is not one (no pane, no state, ended)."""
    pane = pane_of(record, socket)
    state = STATE_OF_ACTIVITY.get(record.activity)
    if pane is None or state is None or record.liveness == records.ENDED:
        return None
    source = source_class(roster, record)
    observed = record.activity_at if record.activity_at is not None else record.started_at
    return {
        "session_id": pane,
        "agent_id": record.harness,
        "state": state,
        "message": message(record),
        "status_epoch": record.status_epoch,
        "occupant_id": record.occupant_id,
        "source": source,
        "revision": record.revision,
        "completed_revision": record.completed_revision or 0,
        "updated_at": round(observed * 1000),
        "promptable": promptable(record, source),
    }


def _pane_number(pane: str) -> tuple[int, str]:
    digits = pane[1:]
    return (int(digits), pane) if digits.isdigit() else (-1, pane)


def every(roster: Roster, socket: str | None) -> list[dict[str, Any]]:
    """One row per pane that has one, in session_id order (pane numbers compare as numbers)."""
    panes = {pane for record in roster.records() if (pane := pane_of(record, socket)) is not None}
    found = []
    for pane in sorted(panes, key=_pane_number):
        record = current(roster, socket, pane)
        shown = row(roster, socket, record) if record is not None else None
        if shown is not None:
            found.append(shown)
    return found


def session_row(door: Door, key: str) -> dict[str, Any]:
    """The row of the session ``key`` names (``%N``, or a key, pid or unique name that resolves
    to a pane); a missing or foreign session is one NotFound."""
    roster, socket = door.live.roster, door.socket
    record = current(roster, socket, door.pane(key))
    shown = row(roster, socket, record) if record is not None else None
    if shown is None:
        raise NotFound(f"no session {key!r}")
    return shown


@operation("every status row, in session_id order", answers={200: ("Rows", "the rows")})
async def agents(request: Request) -> JSONResponse:
    """``GET /agents``: every status row."""
    door = context.of(request).door
    return JSONResponse({"agents": every(door.live.roster, door.socket)})


@operation("one session's status row", answers={200: ("Row", "the row")}, fails=(404, 409), params=(SESSION,))
async def agent(request: Request) -> JSONResponse:
    """``GET /agents/{session}``: one status row."""
    return JSONResponse(session_row(context.of(request).door, request.path_params["session"]))
