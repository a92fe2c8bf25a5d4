"""Routes that send claims: a hook's claim, a launcher's registration, a display name.

None of them changes a session directly: each builds a claim and hands it to the live roster,
which accepts or refuses it by precedence. A refusal is a 409 carrying the roster's reasons.
A client's claim is held to :class:`~roost.truth.roster.claimschema.ClaimBody`, which speaks as no
source rosterd keeps for itself and sets no part of a pending request only rosterd may set;
those two are looked for first, for words that say why.
"""

from __future__ import annotations

from typing import Any

import psutil
from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.actions import names
from roost.faces.api import context, schemas
from roost.faces.api.body import read, read_object
from roost.faces.api.errors import BadRequest, Conflict, NotFound
from roost.faces.api.operations import KEY, operation
from roost.truth.detect import procs
from roost.truth.roster import BadClaim, Claim, Outcome, check, parse, pending, records, to_json
from roost.truth.roster.claimschema import ROSTERD_SOURCES, ClaimBody
from roost.truth.roster.precedence import LAUNCHER

NOT_POSTED = ROSTERD_SOURCES
"""Sources no ``POST /claim`` may speak as, whoever sends it (:data:`ROSTERD_SOURCES` says why)."""


def _answer(roster_head: int, outcome: Outcome, status: int = 200, **extra: Any) -> JSONResponse:
    body = {
        "accepted": outcome.accepted,
        "session_key": outcome.session_key,
        "reasons": list(outcome.reasons),
        "seq": roster_head,
        **extra,
    }
    if not outcome.accepted:
        reason = outcome.reasons[0] if outcome.reasons else "the roster refused the claim"
        raise Conflict(reason, **{k: v for k, v in body.items() if k != "accepted"})
    return JSONResponse(body, status_code=status)


def refuse_rosterd_only(claim: object, where: str) -> None:
    """A 400 for a claim (``where`` says which part of the body it is) whose pending request sets
    what only rosterd may say, in words that name that key."""
    fields = claim.get("fields") if isinstance(claim, dict) else None
    taken = pending.rosterd_only(fields.get("pending") if isinstance(fields, dict) else None)
    if taken:
        name = f"{where}fields.pending.{taken}"
        raise BadRequest(f"{name} is rosterd's to say, not a claim's", field=name)


CLAIM_LIMIT = 12 * 65536 + 4096
"""Bytes a claim may hold: a turn's recap of 65,536 characters however it is escaped (the hook
sends ASCII-only JSON, where a character outside the BMP is twelve bytes), and the few hundred
the rest of a claim takes. A body cut at 4 KiB would lose a long reply's whole Stop claim, and
the turn would never end on the roster."""


def _keeps_recaps(daemon: context.Context) -> bool:
    runner = daemon.door.runner
    return runner is None or runner.settings.runner.recap


@operation(
    "send one claim (source defaults to hook; launcher, acp and integration are refused over HTTP)",
    answers={200: ("ClaimResult", "accepted")},
    fails=(400, 404, 409, 413),
    body=ClaimBody,
    limit=CLAIM_LIMIT,
)
async def claim(request: Request) -> JSONResponse:
    """A hook's claim (``source`` defaults to ``hook``), validated as the roster reads claims."""
    daemon = context.of(request)
    roster = daemon.live.roster
    payload = await read_object(request)
    source = payload.get("source")
    if source in NOT_POSTED:
        raise BadRequest(f"{source} claims are not accepted over HTTP", field="source")
    refuse_rosterd_only(payload, "")
    fields = payload.get("fields")
    if isinstance(fields, dict) and "recap" in fields and not _keeps_recaps(daemon):
        del fields["recap"]  # [runner] recap = false: no turn's reply is kept, a pane's neither
    try:
        parsed = parse(payload, daemon.clock())
    except BadClaim as error:
        raise BadRequest(str(error), field=error.field) from None
    key = parsed.session_key
    if key is not None and roster.record(key) is None:
        process = parsed.process
        own = records.session_key(roster.node_id, process.pid, process.start_ticks) if process else None
        if key != own:
            raise NotFound(f"no session {key!r}")
    outcome = daemon.live.apply(parsed)
    return _answer(roster.head, outcome)


@operation(
    "register a process a launcher started",
    answers={
        200: ("ClaimResult", "the process's session, already known"),
        201: ("ClaimResult", "a new session"),
    },
    fails=(400, 404, 409, 413),
    body=schemas.Register,
)
async def register(request: Request) -> JSONResponse:
    """A launcher registers a process it started: the session gets source ``launcher``, whose
    identity fields (name, harness, cwd…) outrank every detector's."""
    daemon = context.of(request)
    roster = daemon.live.roster
    body = await read(request, schemas.Register)
    pid = body.pid
    process = procs.identity(pid)
    if process is None:
        raise NotFound(f"no process {pid} on this node")
    ticks = body.start_ticks
    if ticks is not None and ticks != process.start_ticks:
        raise NotFound(f"process {pid} started at tick {ticks} has exited; the pid names another process now")
    try:
        started_at: float | None = psutil.Process(pid).create_time()
    except psutil.Error:
        started_at = None
    fields = {
        name: getattr(body, name) for name in schemas.REGISTERED_FIELDS if name in body.model_fields_set
    }
    built = Claim(
        LAUNCHER,
        daemon.clock(),
        process=process,
        ancestors=procs.ancestors(pid),
        fields=fields,
        started_at=started_at,
    )
    problem = check(built)
    if problem:
        raise BadRequest(problem)
    existed = roster.find(process) is not None
    outcome = daemon.live.apply(built)
    record = roster.record(outcome.session_key) if outcome.session_key else None
    extra = {"record": to_json(record)} if record else {}
    return _answer(roster.head, outcome, 200 if existed else 201, **extra)


@operation(
    "set or clear (null) a session's display name",
    answers={200: ("ClaimResult", "named")},
    fails=(400, 404, 409, 413),
    body=schemas.Name,
    params=(KEY,),
)
async def name(request: Request) -> JSONResponse:
    """``{"name": LABEL}`` names a session for every client, and a daemon restart keeps it;
    ``{"name": null}`` clears the name given here, letting whatever a detector said show again
    (:mod:`roost.actions.names`)."""
    daemon = context.of(request)
    roster = daemon.live.roster
    found = daemon.door.local(request.path_params["key"], pane_ids=False)
    label = (await read(request, schemas.Name)).name
    named = names.name(daemon.door, found, label)
    record = roster.record(named.key)
    return _answer(roster.head, named.outcome, record=to_json(record) if record else None)
