"""The union roster as a document: this node's records and every peer's, each marked with how
its node stands.

``GET /swarm/snapshot`` serves it, ``GET /swarm/events`` sends it after every change and a
``snapshot`` change of ``GET /swarm/changes`` carries it. It is derived from the roster and
:class:`~roost.remote.swarm.peers.Peers` and never merged into this node's own roster.

:func:`capture` takes the union at one moment as a :class:`View`: references to what was
kept then, not a copy. A record is immutable and a peer's served JSON is made once per
revision and replaced, never changed, so a view holds a pointer per record and still says,
when it is written out later, what the union was when it was taken: ``/swarm/events`` takes
one at every change and writes each when its client reads it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from roost.remote.swarm.peers import LOCAL, Pane, Peer, Peers
from roost.truth.roster import records
from roost.truth.roster.times import to_wire

SCHEMA = "rosterd.swarm.v1"


def served(record: records.Record, state: str, age_ms: int) -> dict[str, Any]:
    """One record as the union serves it: the record's own fields, then its node's standing."""
    return {**records.to_json(record), "peer_state": state, "peer_age_ms": age_ms}


def node_row(peer: Peer, now: float) -> dict[str, Any]:
    """One peer's standing in the union (a ``node`` change says it): its name, how its link
    stands and what was kept of it."""
    return {
        "node": peer.node,
        "node_id": peer.node_id,
        "peer_state": peer.state(),
        "peer_age_ms": peer.age_ms(now),
        "sessions": len(peer.records),
        "dropped": peer.dropped,
    }


def _listed(terminals: tuple[Pane, ...] | None) -> list[Pane] | None:
    return None if terminals is None else list(terminals)


@dataclass(frozen=True)
class View:
    """The union as it stood at ``at``: this node's records and each peer's row with its
    records' JSON (see the module's docstring for why holding one is cheap)."""

    node: str
    node_id: str
    at: float
    local: tuple[records.Record, ...]
    peers: tuple[tuple[dict[str, Any], tuple[dict[str, Any], ...]], ...]
    terminals: tuple[Pane, ...] | None = None
    """This node's terminals as it last listed them for its peers (None: not listed)."""

    def document(self, epoch: int, seq: int) -> dict[str, Any]:
        """The union document: ``nodes`` (this node first, then each peer by name) and
        ``records`` (this node's first), stamped with the swarm feed's ``status_epoch`` and
        ``seq``."""
        itself = {"node": self.node, "node_id": self.node_id, "peer_state": LOCAL, "peer_age_ms": 0}
        rows = [{**itself, "sessions": len(self.local), "dropped": 0, "terminals": _listed(self.terminals)}]
        out = [served(record, LOCAL, 0) for record in self.local]
        for row, wire in self.peers:
            rows.append(row)
            state, age = row["peer_state"], row["peer_age_ms"]
            out += [{**doc, "peer_state": state, "peer_age_ms": age} for doc in wire]
        return {
            "schema": SCHEMA,
            "node": self.node,
            "node_id": self.node_id,
            "status_epoch": epoch,
            "seq": seq,
            "generated_at": to_wire(self.at),
            "nodes": rows,
            "records": out,
        }


def capture(
    node: str,
    node_id: str,
    local: Iterable[records.Record],
    peers: Peers,
    now: float,
    terminals: tuple[Pane, ...] | None = None,
) -> View:
    """The union now, as a :class:`View`; ``terminals`` this node's, as its peers were told."""
    kept = tuple(
        (
            {**node_row(peer, now), "terminals": _listed(peer.terminals)},
            tuple(map(peer.served, peer.records.values())),
        )
        for peer in peers.all()
    )
    return View(node, node_id, now, tuple(local), kept, terminals)


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
    """The union now, as a document (see :meth:`View.document`)."""
    return capture(node, node_id, local, peers, now).document(epoch, seq)
