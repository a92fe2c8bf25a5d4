"""Routes that send claims: a hook's claim, a launcher's registration, a display name.

None of them changes a session directly: each builds a claim and hands it to the live roster,
which accepts or refuses it by precedence. A refusal is a 409 carrying the roster's reasons.
"""

from __future__ import annotations

from typing import Any

import psutil
from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.api import services
from roost.api.body import read_object
from roost.api.errors import BadRequest, Conflict, NotFound
from roost.api.lookup import resolve
from roost.detect import procs
from roost.roster import BadClaim, Claim, Outcome, check, parse, records, to_json
from roost.roster.precedence import ACP, HOOK, INTEGRATION, LAUNCHER

ATTESTED = (ACP, INTEGRATION)
"""Sources whose claims must come from where the daemon can prove who sent them (its own ACP
stream; the reports socket's peer credentials), never from a POST."""

REGISTERED_FIELDS = (
    "harness",
    "session_id",
    "name",
    "cwd",
    "lane",
    "tty",
    "tmux",
    "permission_policy",
    "mode",
)


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


async def claim(request: Request) -> JSONResponse:
    """A hook's claim (``source`` defaults to ``hook``), validated as the roster reads claims."""
    daemon = services.of(request)
    roster = daemon.live.roster
    payload = await read_object(request)
    payload.setdefault("source", HOOK)
    if payload["source"] in ATTESTED:
        raise BadRequest(f"{payload['source']} claims are not accepted over HTTP")
    try:
        parsed = parse(payload, daemon.clock())
    except BadClaim as error:
        raise BadRequest(str(error)) from None
    key = parsed.session_key
    if key is not None and roster.record(key) is None:
        process = parsed.process
        own = records.session_key(roster.node_id, process.pid, process.start_ticks) if process else None
        if key != own:
            raise NotFound(f"no session {key!r}")
    outcome = daemon.live.apply(parsed)
    return _answer(roster.head, outcome)


def _pid(payload: dict[str, Any]) -> int:
    pid = payload.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        raise BadRequest("pid must be a positive integer")
    return pid


async def register(request: Request) -> JSONResponse:
    """A launcher registers a process it started: the session gets source ``launcher``, whose
    identity fields (name, harness, cwd…) outrank every detector's."""
    daemon = services.of(request)
    roster = daemon.live.roster
    payload = await read_object(request)
    pid = _pid(payload)
    process = procs.identity(pid)
    if process is None:
        raise NotFound(f"no process {pid} on this node")
    ticks = payload.get("start_ticks")
    if ticks is not None and ticks != process.start_ticks:
        raise NotFound(f"process {pid} started at tick {ticks} has exited; the pid names another process now")
    try:
        started_at: float | None = psutil.Process(pid).create_time()
    except psutil.Error:
        started_at = None
    fields = {name: payload[name] for name in REGISTERED_FIELDS if name in payload}
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


async def name(request: Request) -> JSONResponse:
    """``{"name": LABEL}`` names a session for every client; ``{"name": null}`` clears the name
    given here, letting whatever a detector said show again."""
    daemon = services.of(request)
    roster = daemon.live.roster
    key = resolve(roster, request.path_params["key"])
    payload = await read_object(request)
    if "name" not in payload:
        raise BadRequest('the body is {"name": LABEL} or {"name": null}')
    label = payload["name"]
    if label is not None and (not isinstance(label, str) or not label.strip()):
        raise BadRequest("name must be non-empty text or null")
    built = Claim(LAUNCHER, daemon.clock(), session_key=key, fields={"name": label})
    problem = check(built)
    if problem:
        raise BadRequest(problem)
    outcome = daemon.live.apply(built)
    record = roster.record(key)
    return _answer(roster.head, outcome, record=to_json(record) if record else None)
