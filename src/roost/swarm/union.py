"""The union roster as a document: this node's records and every peer's, each marked with how
its node stands.

``GET /swarm/snapshot`` serves it, ``GET /swarm/events`` sends it on every change and a
``snapshot`` change of ``GET /swarm/changes`` carries it. It is derived on request from the
roster and :class:`~roost.swarm.peers.Peers` and never stored: nothing here is merged into
this node's own roster.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from roost.roster import records
from roost.roster.times import to_wire
from roost.swarm.peers import LOCAL, Peer, Peers

SCHEMA = "rosterd.swarm.v1"


def served(record: records.Record, state: str, age_ms: int) -> dict[str, Any]:
    """One record as the union serves it: the record's own fields, then its node's standing."""
    return {**records.to_json(record), "peer_state": state, "peer_age_ms": age_ms}


def node_row(peer: Peer, now: float) -> dict[str, Any]:
    """One peer's line in the union: its name, its standing and what was kept of it."""
    return {
        "node": peer.node,
        "node_id": peer.node_id,
        "peer_state": peer.state(),
        "peer_age_ms": peer.age_ms(now),
        "sessions": len(peer.records),
        "dropped": peer.dropped,
    }


def document(
    node: str,
    node_id: str,
    local: Iterable[records.Record],
    peers: Peers,
    *,
    epoch: int,
    seq: int,
    now: float,
) -> dict[str, Any]:
    """The union: ``nodes`` (this node first, then each peer by name) and ``records`` (this
    node's first), stamped with the swarm feed's ``status_epoch`` and ``seq``."""
    own = list(local)
    itself = {"node": node, "node_id": node_id, "peer_state": LOCAL, "peer_age_ms": 0}
    rows = [{**itself, "sessions": len(own), "dropped": 0}, *(node_row(peer, now) for peer in peers.all())]
    return {
        "schema": SCHEMA,
        "node": node,
        "node_id": node_id,
        "status_epoch": epoch,
        "seq": seq,
        "generated_at": to_wire(now),
        "nodes": rows,
        "records": peers.union(own, now),
    }
