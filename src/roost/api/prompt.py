"""``POST /sessions/{key}/prompt``: one fenced prompt, written once or not at all.

A headless session's prompt goes to the runner (:mod:`roost.api.headless`). A pane's is the
fenced prompt of :mod:`roost.actions.prompt`, which says what is checked, how the text is
encoded and when a write is ``ambiguous``; this route reads the body (the pins the caller
read, the deadline, the wait), and answers with the outcome, refusing a rejection with 409.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.actions.prompt import DEFAULT_DEADLINE, REJECTED, TEXT_LIMIT, Ask, Attempt, encoded
from roost.actions.waits import Pin
from roost.api import headless, rows, schemas, services, waits
from roost.api.body import read
from roost.api.errors import Conflict, NotFound
from roost.api.operations import KEY, operation

PINNED = "a terminal's prompt pins the row that was read (status_epoch, occupant_id, revision)"
BODY_LIMIT = 6 * TEXT_LIMIT + 4096
"""A body holding the longest text, every byte of it escaped (``\\u0001``), and the pins."""


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
)
async def prompt(request: Request) -> JSONResponse:
    if headless.headless_key(request) is not None:
        return await headless.prompt(request)
    daemon = services.of(request)
    now = daemon.clock()
    other = (schemas.HeadlessPrompt, f"{request.path_params['key']!r} is no headless session: {PINNED}")
    ask = ask_of(await read(request, schemas.Prompt, BODY_LIMIT, {"now": now}, other), now)
    if daemon.tmux is None:
        raise NotFound(f"no session {request.path_params['key']!r}")
    pane = rows.session_pane(daemon.live.roster, daemon.tmux.socket, request.path_params["key"])
    attempt = Attempt(
        daemon.live,
        daemon.tmux,
        daemon.clock,
        pane,
        ask,
        lambda pin, until: waits.open_wait(request, pane, pin, until),
    )
    try:
        outcome, code, reason = await attempt.run()
        body: dict[str, Any] = {
            "session_id": pane,
            "input": outcome,
            "code": code,
            "reason": reason,
            "written_bytes": len(ask.data) + 1 if outcome != REJECTED else 0,
        }
        if outcome == REJECTED:
            raise Conflict(reason or code or REJECTED, **body)
        if attempt.waiter is not None:
            try:
                ending = await waits.unless_disconnected(
                    request, attempt.waiter.outcome(ask.deadline, daemon.clock)
                )
            except waits.ClientGone:
                return JSONResponse(body)
            body["wait"] = waits.ending_json(ending, daemon.live.roster, daemon.tmux.socket)
        return JSONResponse(body)
    finally:
        attempt.close()
