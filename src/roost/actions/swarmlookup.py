"""Whether what a caller typed names a session another node owns: the door's third lane.

:func:`roost.actions.lookup.resolve` finds a session on this node; this module answers the
question before it, for a node in a swarm:

- an exact session key names its owner by its prefix (``<node_id>:<pid>:<start_ticks>``), so a
  key of a current member is that member's, whether or not its roster has reached this node;
- a pid is a process on this node, never another's;
- a display name is the one live session that has it anywhere: this node's roster and the
  peers' rosters as last heard. One live session of that name on a peer and none here is the
  peer's; two or more live anywhere is ambiguous, and the refusal lists each candidate with its
  node, never guessing. A name live nowhere else is left to this node's own rules.

Only members count: a peer's records are kept until it is forgotten, and a node this one is
no longer in a swarm with owns nothing it can act on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.actions.remote import owner_of
from roost.base.errors import Conflict
from roost.base.procfs import PID_MAX
from roost.truth.roster import Record, Roster, records

if TYPE_CHECKING:
    from roost.actions.remote import Forwarder
    from roost.remote.swarm.peers import Peers

Elsewhere = tuple[Record | None, str, str]
"""A session of another node: its record as last heard (None when no frame of it has come),
the owner's node id and its name."""


def find(roster: Roster, peers: Peers | None, forwarder: Forwarder | None, name: str) -> Elsewhere | None:
    """The session of another node ``name`` names, None when it names none (this node's own
    rules then decide), Conflict when a name is live on more than one node or twice on one."""
    if forwarder is None:
        return None
    owner = owner_of(name)
    if owner is not None:
        if owner == roster.node_id or forwarder.member(owner) != owner:
            return None
        kept = peers.get(owner) if peers is not None else None
        return (kept.records.get(name) if kept else None), owner, forwarder.name(owner)
    if peers is None or (name.isascii() and name.isdigit() and len(name) <= len(str(PID_MAX))):
        return None
    remote = [
        record
        for record in peers.find(name)
        if record.name == name and forwarder.member(record.node_id) == record.node_id
    ]
    if not remote:
        return None
    local = [r for r in roster.records() if r.name == name and r.liveness != records.ENDED]
    everyone = local + remote
    if len(everyone) > 1:
        raise ambiguous(name, everyone)
    chosen = remote[0]
    return chosen, chosen.node_id, chosen.node


def ambiguous(name: str, candidates: list[Record]) -> Conflict:
    """The refusal of a name that leaves a choice: every candidate's key, and its node."""
    where = ", ".join(f"{record.session_key} on {record.node}" for record in candidates)
    return Conflict(
        f"the name {name!r} is ambiguous across the swarm: {where}",
        candidates=[record.session_key for record in candidates],
        nodes=[
            {"session_key": record.session_key, "node_id": record.node_id, "node": record.node}
            for record in candidates
        ],
    )
