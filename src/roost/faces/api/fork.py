"""``POST /sessions/{key}/fork``: a new session from a session's conversation, whatever its lane
(:mod:`roost.actions.fork`).

A headless session is forked by its ACP adapter on a holder of its own; a pane's agent by its
CLI, in a new window of the source's tmux session, as ``roost fork`` does. The answer (201) says
where the fork runs: its record (headless) or its pane.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.actions import fork as forking
from roost.faces.api import context, schemas
from roost.faces.api.body import read
from roost.faces.api.operations import KEY, operation
from roost.truth.roster import answer


@operation(
    "fork a session: a new one that starts from its conversation (a headless one through its "
    "adapter's session/fork, a pane's agent through its CLI), in a new git worktree when asked",
    answers={201: ("Forked", "started: where the fork runs")},
    fails=(400, 404, 409, 413, 502, 503),
    body=schemas.Fork,
    params=(KEY,),
)
async def fork(request: Request) -> JSONResponse:
    body = await read(request, schemas.Fork)
    door = context.of(request).door
    forked = await forking.fork(
        door, request.path_params["key"], body.name, worktree=body.worktree, branch=body.branch
    )
    return JSONResponse(answer(forked), status_code=201)
