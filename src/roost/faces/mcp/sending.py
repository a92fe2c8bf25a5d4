"""``session.send``: a prompt to a headless session (:func:`roost.actions.headless.prompt`), or
to a terminal pane through the fenced prompt the API's ``POST /sessions/{key}/prompt`` writes
(one paste and one Enter, once or not at all: :func:`roost.actions.prompt.send`).

A pane's prompt is pinned to what the roster shows as the call arrives (the occupant, its
revision) and refused as the API refuses it (``not_promptable``, ``blocked``, …: 409, nothing
written). A write that cannot be proven whole is answered ``"input": "ambiguous"``, with the
reason: the text may have arrived, and must not be sent again. The wait reads the same words
for both lanes: ``idle`` (a turn that ended after the prompt, or a person is now needed),
``needs_attention``, ``ended`` (the occupant is gone). A headless session's wait also says
whether the record's recap is ``stale``, an earlier turn's, as ``rosterd prompt``'s does.
"""

from __future__ import annotations

from typing import Any

from roost.actions import headless, prompt, waits
from roost.actions.sessions import Door, Found
from roost.base.errors import Conflict
from roost.faces.mcp import inputs
from roost.truth.roster import records, to_json

UNTIL = {
    records.IDLE: frozenset({"idle", "blocked"}),
    records.NEEDS_ATTENTION: frozenset({"blocked"}),
    records.ENDED: frozenset(),
}
"""What a pane's wait watches for, in the row's words: ``ended`` is no state, only the
occupant's end (``session_closed``, ``occupant_changed``)."""


async def to_headless(door: Door, found: Found, args: inputs.Send) -> dict[str, Any]:
    sent = await headless.prompt(door, found, args.prompt, args.wait_until, args.timeout_s)
    answer: dict[str, Any] = {"input": prompt.ACCEPTED}
    done = sent.record
    if sent.waited is not None:
        waited = sent.waited
        done = waited.record or done
        answer["wait"] = {"until": args.wait_until, "reached": waited.reached, "stale": waited.stale}
    return {"record": to_json(done), **answer}


async def to_pane(door: Door, found: Found, args: inputs.Send) -> dict[str, Any]:
    until = UNTIL[args.wait_until] if args.wait_until is not None else None
    sent = await prompt.send(door, found, args.prompt, until, args.timeout_s)
    if sent.input == prompt.REJECTED:
        raise Conflict(
            sent.reason or sent.code or sent.input,
            session_id=sent.pane,
            input=sent.input,
            code=sent.code,
            reason=sent.reason,
        )
    assert sent.record is not None, "an admitted prompt has the occupant's record"
    answer: dict[str, Any] = {"input": sent.input, **({"reason": sent.reason} if sent.reason else {})}
    latest = sent.record
    if sent.ending is not None and args.wait_until is not None:
        latest = sent.ending.record or latest
        answer["wait"] = {"until": args.wait_until, "reached": _reached(args.wait_until, sent.ending)}
    return {"record": to_json(latest), **answer}


def _reached(until: str, ending: waits.Ending) -> bool:
    if until == records.ENDED:
        return ending.outcome in (waits.SESSION_CLOSED, waits.OCCUPANT_CHANGED)
    found = ending.record.activity if ending.record is not None else None
    return ending.outcome == waits.MATCHED and found == until
