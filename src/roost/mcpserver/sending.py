"""``session.send``: a prompt to a headless session through the runner, or to a terminal pane
through the fenced prompt the API's ``POST /sessions/{key}/prompt`` writes (one paste and one
Enter, once or not at all: :mod:`roost.actions.prompt`).

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

from roost.actions import prompt, waits
from roost.actions.occupants import current, pane_of
from roost.errors import Conflict, TargetGone
from roost.mcpserver import inputs
from roost.roster import Record, records, to_json
from roost.roster.live import Live
from roost.roster.times import Clock
from roost.runner.runner import Runner
from roost.tmux.server import Server

UNTIL = {
    records.IDLE: frozenset({"idle", "blocked"}),
    records.NEEDS_ATTENTION: frozenset({"blocked"}),
    records.ENDED: frozenset(),
}
"""What a pane's wait watches for, in the row's words: ``ended`` is no state, only the
occupant's end (``session_closed``, ``occupant_changed``)."""


async def headless(runner: Runner, key: str, args: inputs.Send) -> dict[str, Any]:
    done, turn = await runner.prompt(key, args.prompt)
    answer: dict[str, Any] = {"input": prompt.ACCEPTED}
    if args.wait_until is not None:
        waited = await runner.wait(key, args.wait_until, args.timeout_s, turn)
        done = waited.record or done
        answer["wait"] = {"until": args.wait_until, "reached": waited.reached, "stale": waited.stale}
    return {"record": to_json(done), **answer}


async def pane(live: Live, tmux: Server, clock: Clock, record: Record, args: inputs.Send) -> dict[str, Any]:
    where = pane_of(record, tmux.socket)
    occupant = current(live.roster, tmux.socket, where) if where else None
    if where is None or occupant is None:
        raise TargetGone(f"no session {args.name!r}")
    now = clock()
    until = UNTIL[args.wait_until] if args.wait_until is not None else None
    pin = waits.Pin(occupant.status_epoch, occupant.occupant_id)
    ask = prompt.Ask(
        prompt.encoded(args.prompt), pin, occupant.revision, now + prompt.DEFAULT_DEADLINE, until
    )
    attempt = prompt.Attempt(live, tmux, clock, where, ask)
    try:
        outcome, code, reason = await attempt.run()
        if outcome == prompt.REJECTED:
            raise Conflict(
                reason or code or outcome, session_id=where, input=outcome, code=code, reason=reason
            )
        answer: dict[str, Any] = {"input": outcome, **({"reason": reason} if reason else {})}
        latest = live.roster.record(occupant.session_key) or occupant
        if attempt.waiter is not None and args.wait_until is not None:
            ending = await attempt.waiter.outcome(now + args.timeout_s, clock)
            latest = ending.record or latest
            answer["wait"] = {"until": args.wait_until, "reached": _reached(args.wait_until, ending)}
        return {"record": to_json(latest), **answer}
    finally:
        attempt.close()


def _reached(until: str, ending: waits.Ending) -> bool:
    if until == records.ENDED:
        return ending.outcome in (waits.SESSION_CLOSED, waits.OCCUPANT_CHANGED)
    found = ending.record.activity if ending.record is not None else None
    return ending.outcome == waits.MATCHED and found == until
