"""``POST /sessions/{key}/permission`` and ``POST /gate``: answering a request, and holding one.

The answer's contract (what it pins, each refusal's code) is :mod:`roost.actions.permission`;
a gate's life is :mod:`roost.actions.gates`. Here are only the doors: the bodies, who is
answering (the journal says who and from where, never the agent), and the long wait a gate's
hook makes.
"""

from __future__ import annotations

import asyncio
import dataclasses

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.actions.gates import Hold
from roost.actions.permission import Answer, Permissions, answer
from roost.api import context, proxy, schemas
from roost.api.body import read
from roost.api.errors import BadRequest, NotFound
from roost.api.operations import KEY, operation
from roost.api.waits import ClientGone, unless_disconnected
from roost.roster import BadClaim, Claim, Record, parse, pending, records, to_json
from roost.roster.live import Live
from roost.roster.precedence import HOOK

GATE_BODY_LIMIT = 16_384
"""A gate's body: a claim (a dialog's summary, the ancestors) and its options."""
WAKE = 1.0
"""Seconds between looks at the roster while a gate waits with nothing announced."""


def _permissions(request: Request) -> Permissions:
    found = context.of(request).door.permissions
    if found is None:
        raise NotFound("this daemon answers no permissions")
    return found


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
    fails=(400, 409, 413),
    body=schemas.Gate,
)
async def gate(request: Request) -> JSONResponse:
    """Claim the wait, hold the request open, answer the hook with the decision (or none)."""
    daemon = context.of(request)
    permissions = _permissions(request)
    body = await read(request, schemas.Gate, GATE_BODY_LIMIT)
    try:
        claim = parse(body.claim, daemon.clock())
    except BadClaim as error:
        raise BadRequest(str(error), field=f"claim.{error.field}" if error.field else "claim") from None
    asked = claim.fields.get("pending")
    if claim.source != HOOK or claim.activity_word != records.NEEDS_ATTENTION or not isinstance(asked, dict):
        raise BadRequest(
            "a gate holds a hook's claim that the session waits, with its pending request", field="claim"
        )
    taken = pending.rosterd_only(asked)
    if taken:
        raise BadRequest(
            f"pending.{taken} is rosterd's to say, not a claim's", field=f"claim.fields.pending.{taken}"
        )
    request_id = pending.new_id()
    held = {**asked, "id": request_id, "answerable": True, "options": _options(body.always)}
    outcome = daemon.live.apply(dataclasses.replace(claim, fields={**claim.fields, "pending": held}))
    key = outcome.session_key
    record = daemon.live.roster.record(key) if key else None
    if record is None or not _ours(record, request_id):  # a higher source speaks for the session
        return _decided(None, None)
    hold = permissions.gates.hold(key, request_id, always=body.always)
    timeout = permissions.gate_timeout(record.harness)
    try:
        decision = await unless_disconnected(request, _outcome(daemon.live, key, hold, timeout))
    except ClientGone:
        decision = None  # the harness ended its hook: the person answered in the terminal
    finally:
        permissions.gates.release(hold)
    if decision is None:
        _let_go(daemon.live, key, request_id, daemon.clock())
        return _decided(None, request_id)
    return _decided(decision.answer, request_id, decision.reason)


NAMES = {pending.ALLOW: "Allow", pending.ALLOW_ALWAYS: "Always allow", pending.REJECT: "Deny"}
"""A gated request's answers as a person reads them."""


def _options(always: bool) -> list[dict[str, str]]:
    """The answers a gated request offers, in ACP's kinds so every client reads one list."""
    offered = [answer for answer in pending.ANSWERS if always or answer != pending.ALLOW_ALWAYS]
    return [{"id": a, "name": NAMES[a], "kind": pending.KINDS_OF_ANSWER[a][0]} for a in offered]


def _ours(record: Record, request_id: str) -> bool:
    """Whether the record still waits on this very request."""
    open_now = record.pending or {}
    return (
        record.liveness != records.ENDED
        and record.activity == records.NEEDS_ATTENTION
        and open_now.get("id") == request_id
    )


async def _outcome(live: Live, key: str, hold: Hold, timeout: float) -> object:
    """The decision, or None when the session moved on or the time ran out."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    with live.subscribe(replay=False, own=True) as stream:
        while not hold.decided.done():
            record = live.roster.record(key)
            left = deadline - loop.time()
            if record is None or not _ours(record, hold.request_id) or left <= 0:
                return None
            told = asyncio.ensure_future(stream.next(min(left, WAKE)))
            await asyncio.wait({told, hold.decided}, return_when=asyncio.FIRST_COMPLETED)
            told.cancel()
            if told.done() and told.result() is None:  # the daemon is stopping
                return None
        return hold.decided.result()


def _let_go(live: Live, key: str, request_id: str, now: float) -> None:
    """The gate gave up on the request: if the session still shows it, say it can no longer
    be answered from here (the dialog in the terminal still can)."""
    record = live.roster.record(key)
    if record is None or not _ours(record, request_id):
        return
    shown = {**(record.pending or {}), "answerable": False, "options": []}
    live.apply(
        Claim(
            HOOK,
            now,
            session_key=key,
            activity=records.NEEDS_ATTENTION,
            event=record.activity_event,
            fields={"pending": shown},
        )
    )


def _decided(answer: str | None, request_id: str | None, reason: str | None = None) -> JSONResponse:
    return JSONResponse({"decision": answer, "reason": reason, "request_id": request_id})
