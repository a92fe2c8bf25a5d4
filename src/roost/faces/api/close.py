"""``POST /sessions/{key}/close``: close a session whatever its lane (:mod:`roost.actions.close`).

A headless session ends as ``/stop`` ends it; a pane's agent is asked to leave with its exit
command and its pane closed, as ``roost close`` does. The answer is the record, and how the pane
was left, in ``roost close --json``'s words.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.actions import close as closing
from roost.faces.api import context, schemas
from roost.faces.api.body import read
from roost.faces.api.operations import KEY, operation
from roost.truth.roster import answer


@operation(
    "close a session: end a headless one as stop does; ask a pane's agent to leave with its exit "
    "command, wait up to timeout_s, then close that one pane (force: without asking)",
    answers={200: ("Closed", "closed: the record, and how the pane was left")},
    fails=(400, 404, 409, 413, 502, 503, 504),
    body=schemas.Close,
    params=(KEY,),
)
async def close(request: Request) -> JSONResponse:
    body = await read(request, schemas.Close)
    door = context.of(request).door
    closed = await closing.close(door, request.path_params["key"], force=body.force, timeout=body.timeout_s)
    return JSONResponse(answer(closed))
