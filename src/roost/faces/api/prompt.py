"""``POST /sessions/{key}/prompt``: one fenced prompt, written once or not at all.

The key is found first (:meth:`roost.actions.sessions.Door.find`), so a session that does not
exist is refused as every route refuses it, whatever the body. A headless session's prompt is
:mod:`roost.faces.api.headless`'s body and action. A pane's is the fenced prompt of
:mod:`roost.actions.prompt`, which says what is checked, how the text is encoded and when a
write is ``ambiguous``; this route reads the body (the pins the caller read, the deadline, the
wait), and answers with the outcome, refusing a rejection with 409.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.actions.prompt import DEFAULT_DEADLINE, REJECTED, Ask, encoded, fenced
from roost.actions.waits import Pin
from roost.faces.api import context, headless, schemas, waits
from roost.faces.api.body import read
from roost.faces.api.errors import Conflict
from roost.faces.api.operations import KEY, operation

PINNED = "a terminal's prompt pins the row that was read (status_epoch, occupant_id, revision)"
BODY_LIMIT = 6 * 65_536 + 4096
"""A body holding a long headless prompt with every character escaped (``\\u0001``), and its
options; a terminal's text is held to its own limit after
(:data:`roost.actions.prompt.TEXT_LIMIT`)."""


def ask_of(body: schemas.Prompt, now: float) -> Ask:
    """The checked body as an :class:`Ask`: what its schema cannot say is checked here (the
    byte limit is a 413; a text of nothing but escapes has nothing left to send)."""
    data = encoded(body.text)
    pin = Pin(body.status_epoch, body.occupant_id)
    deadline = body.deadline_ms / 1000 if body.deadline_ms is not None else now + DEFAULT_DEADLINE
    until = frozenset(body.wait.until) if body.wait is not None else None
    return Ask(data, pin, body.revision, deadline, until)


@operation(
    "a terminal's: write one fenced prompt while the pinned row holds; a headless session's: "
    "send the turn (resuming it first when suspended); either optionally awaits the turn",
    answers={
        200: (
            ("PromptOutcome", "HeadlessAnswer"),
            "accepted or ambiguous (never retried); a headless session's record",
        )
    },
    fails=(400, 404, 409, 413, 429, 502),
    body=(schemas.Prompt, schemas.HeadlessPrompt),
    params=(KEY,),
    limit=BODY_LIMIT,
)
async def prompt(request: Request) -> JSONResponse:
    daemon = context.of(request)
    found = daemon.door.local(request.path_params["key"])
    if found.headless:
        return await headless.prompt(request, found)
    now = daemon.clock()
    other = (schemas.HeadlessPrompt, f"{request.path_params['key']!r} is no headless session: {PINNED}")
    ask = ask_of(await read(request, schemas.Prompt, {"now": now}, other), now)
    sent = await fenced(daemon.door, found, ask, limit=daemon.max_streams, watch=waits.watch(request))
    body: dict[str, Any] = {
        "session_id": sent.pane,
        "input": sent.input,
        "code": sent.code,
        "reason": sent.reason,
        "written_bytes": sent.written_bytes,
    }
    if sent.input == REJECTED:
        raise Conflict(sent.reason or sent.code or REJECTED, **body)
    if sent.ending is not None:
        body["wait"] = waits.ending_json(sent.ending, daemon.live.roster, daemon.door.socket)
    return JSONResponse(body)
