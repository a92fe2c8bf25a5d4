"""Handing a headless session to another node of the swarm: ``rosterd handoff KEY --to NODE``.

The steps, each on the node that owns it, and what a failure at each leaves:

1. **Here, the owner**: the session is suspended (refused mid-turn or while a permission waits,
   as a suspend is) and marked as going to the target, so nothing resumes it here meanwhile;
   its bundle is made (:mod:`roost.headless.runner.portable`: what it runs with, and the harness's
   transcript files its manifest names). A transcript past the size cap refuses here.
2. **The target** takes it in over the signed peer channel (:mod:`roost.remote.mesh.handoffs`): checks
   the bundle, the folder, the files, writes them, and resumes the session under a new key
   with the same session id. It answers the new record, or why not.
3. **Here again**: only on that answer does the session end ``handed_off``, its record naming
   where it went (``handed_to``). Any refusal, or a target that does not answer, leaves it
   suspended here with its history and its mark cleared: resumable, the record's
   ``error_reason`` and the caller's error saying why (a refusal is the target's status and
   ``code``, passed on as :class:`~roost.base.errors.Relayed`).

Nothing runs twice: the session is live on neither node from step 1 until the target resumes
it, and the origin never resumes a session marked as going elsewhere. A daemon killed during
step 2 leaves the mark; running the handoff again settles it (the target answers the session
it already took from that key, or takes it now, or refuses and the mark is cleared). The
target keeps a session only once its answer is out: one whose origin hung up first is dropped
there (:mod:`roost.remote.mesh.handoffs`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from roost.actions import remote
from roost.actions.sessions import Door, Found
from roost.base.errors import Relayed, RoostError, UsageError
from roost.truth.roster import Record

TOOK = (200, 201)


@dataclass(frozen=True)
class Handed:
    """A handoff done: the session's record here (ended ``handed_off``) and the new session's
    record on the target, as the target gave it."""

    record: Record
    there: dict[str, Any]


async def handoff(door: Door, target: str | Found, node: str) -> Handed:
    """Hand the headless session ``target`` names to the member ``node`` names (its id or name)."""
    runner, key = door.headless(target)
    roster, forwarder = door.live.roster, door.forwarder
    node_id = remote.node_named(forwarder, roster.node_id, roster.node, node)
    if node_id == roster.node_id:
        raise UsageError(f"{key} already runs on {roster.node}", code="same_node")
    assert forwarder is not None  # another node than this one is named only in a swarm
    name = forwarder.name(node_id)
    bundle = await runner.hand_out(key, name)
    try:
        reply = await forwarder.hand(node_id, bundle)
    except RoostError as error:
        runner.kept(key, f"the handoff to {name} failed: {error.message}")
        raise
    answer = _json(reply.body)
    there = answer.get("record")
    new_key = there.get("session_key") if isinstance(there, dict) else None
    if reply.status not in TOOK or not isinstance(new_key, str) or remote.owner_of(new_key) != node_id:
        why = str(answer.get("error") or f"it answered {reply.status} with no session of its own")
        runner.kept(key, f"{name} refused the handoff: {why}")
        code = answer.get("code")
        raise Relayed(
            f"{name} refused the handoff: {why}; the session stays here, suspended",
            status=reply.status if reply.status >= 400 else 502,
            **({"code": code} if isinstance(code, str) else {}),
        )
    to = {"node": name, "node_id": node_id, "session_key": new_key}
    return Handed(runner.handed_off(key, to), dict(there))


def _json(body: bytes) -> dict[str, Any]:
    try:
        found = json.loads(body)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}
