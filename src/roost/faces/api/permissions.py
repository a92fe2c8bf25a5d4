"""``POST /sessions/{key}/permission`` and ``POST /gate``: answering a request, and holding one;
``GET /gates``: whose requests this node can answer that way, and how to turn a gate on.

The answer's contract (what it pins, each refusal's code) is :mod:`roost.actions.permission`;
holding a gate's request open until it is decided is :mod:`roost.actions.gates`. Here are
only the doors: the bodies, and who is answering (the journal says who and from where, never
the agent).
"""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.actions import permission as permissions
from roost.actions.gates import hold
from roost.actions.permission import Answer, answer
from roost.faces.api import context, proxy, schemas, waits
from roost.faces.api.body import held, read, read_object
from roost.faces.api.claims import refuse_rosterd_only
from roost.faces.api.operations import KEY, operation
from roost.truth.roster import to_json
from roost.truth.roster.claims import from_body

GATE_BODY_LIMIT = 16_384
"""A gate's body: a claim (a dialog's summary, the ancestors) and its options."""


@operation(
    "answer the pending permission of a headless session or a gated pane; fenced by the request "
    "id, status_epoch and occupant_id it pins (409 with a code when they moved)",
    answers={200: ("HeadlessAnswer", "answered: the record after")},
    fails=(400, 404, 409, 413),
    body=schemas.Permission,
    params=(KEY,),
)
async def permission(request: Request) -> JSONResponse:
    body = await read(request, schemas.Permission)
    by, via = proxy.who(request)
    came = proxy.through(request)
    given = Answer(
        body.option,
        body.reason,
        body.request_id,
        body.status_epoch,
        body.occupant_id,
        by,
        via,
        came.node if came is not None else None,
    )
    record = answer(context.of(request).door, request.path_params["key"], given)
    return JSONResponse({"record": to_json(record)})


@operation(
    "a harness's gate: claim the wait, then hold the request open until it is answered, the "
    "person answers in the terminal, the session moves on or gate_timeout_s passes",
    answers={200: ("GateDecision", "the decision, or null: fall back to the dialog")},
    fails=(400, 404, 409, 413),
    body=schemas.Gate,
    limit=GATE_BODY_LIMIT,
)
async def gate(request: Request) -> JSONResponse:
    """The hook's claim, held open by :func:`roost.actions.gates.hold`; the decision (or none)."""
    daemon = context.of(request)
    now = daemon.clock()
    doc = await read_object(request)
    refuse_rosterd_only(doc.get("claim"), "claim.")
    body = held(doc, schemas.Gate, {"received_at": now})
    claim = from_body(body.claim, now)
    ended = await hold(daemon.door, claim, always=body.always, watch=waits.watch(request))
    return JSONResponse({"decision": ended.answer, "reason": ended.reason, "request_id": ended.request_id})


@operation(
    "each harness that offers a permission gate, and whether it is on here: null, or the command "
    "that turns it on (the web app says it where only the terminal can answer a request)",
    answers={200: ("Gates", "the gates")},
)
async def gates(request: Request) -> JSONResponse:
    found = await asyncio.to_thread(permissions.gates, context.of(request).door)
    return JSONResponse({"gates": found})
