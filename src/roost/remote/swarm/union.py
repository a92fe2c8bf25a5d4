"""The union roster as a document: this node's records and every peer's, each marked with how
its node stands.

``GET /swarm/snapshot`` serves it, ``GET /swarm/events`` sends it after every change and a
``snapshot`` change of ``GET /swarm/changes`` carries it. It is derived from the roster and
:class:`~roost.remote.swarm.peers.Peers` and never merged into this node's own roster.

:func:`capture` takes the union at one moment as a :class:`View`: references to what was
kept then, not a copy. A record is immutable, replaced and never changed, so a view holds a
pointer per record and still says, when it is written out later, what the union was when it
was taken: ``/swarm/events`` takes one at every change and writes each when its client reads
it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from roost.remote.swarm.peers import LOCAL, Pane, Peer, Peers
from roost.truth.roster import records
from roost.truth.roster.times import to_wire

SCHEMA = "rosterd.swarm.v1"


def dumps(doc: object) -> str:
    """JSON as the API writes it: compact, UTF-8 kept."""
    return json.dumps(doc, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def opened(doc: dict[str, Any], key: str) -> str:
    """``doc`` as JSON text up to the value of ``key``, put last: what :func:`joined` and a
    text made of many parts (:meth:`View.text`) begin with."""
    head = dumps(doc)
    return f"{head[:-1]}{',' if doc else ''}{dumps(key)}:"


def joined(doc: dict[str, Any], key: str, raw: str) -> str:
    """``doc`` as JSON text with ``key`` last, its value ``raw``, JSON text already made."""
    return f"{opened(doc, key)}{raw}}}"


class Texts:
    """Each peer record's served JSON as text, made once per record and kept while it is
    served: the union of 50,000 sessions is ~40 MB of JSON, and encoding it whole for each read
    took most of a second; joining the texts kept takes a few tens of milliseconds.

    A text is kept open, without its closing brace and with a comma after its last field: each
    read closes it with its node's standing, and a node's records are joined in one pass
    (:meth:`View.text`), where closing each record's text alone copied the union twice more.

    A record is a value, replaced and never changed (:class:`~roost.remote.swarm.peers.Peers`),
    so the record itself (held here, so its id is not reused) says whether its text is still
    the one kept. The text is the one copy of a record's JSON the union keeps: a document (a
    dict) of each record besides, as this node once kept, cost ~1 KiB a record, 50 MiB at a
    thousand nodes, for the rare reads that want one (:meth:`View.document` makes them)."""

    def __init__(self) -> None:
        self._kept: dict[int, tuple[records.Record, str]] = {}

    def opening(self, record: records.Record) -> str:
        """``record``'s JSON text open for more fields: ``{"a":1,``."""
        found = self._kept.get(id(record))
        if found is None or found[0] is not record:
            found = self._kept[id(record)] = (record, dumps(records.to_json(record))[:-1] + ",")
        return found[1]

    def keep_only(self, kept: Iterable[records.Record]) -> None:
        """Forget every text but those of ``kept`` (the records served now)."""
        self._kept = {id(record): self._kept[id(record)] for record in kept if id(record) in self._kept}

    def __len__(self) -> int:
        return len(self._kept)


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
    peers: tuple[tuple[dict[str, Any], tuple[records.Record, ...]], ...]
    terminals: tuple[Pane, ...] | None = None
    """This node's terminals as it last listed them for its peers (None: not listed)."""

    def document(self, epoch: int, seq: int, only: str | None = None) -> dict[str, Any]:
        """The union document: ``nodes`` (this node first, then each peer by name) and
        ``records`` (this node's first), stamped with the swarm feed's ``status_epoch`` and
        ``seq``; with ``only`` (a node id), that node's row and records alone."""
        head = self._head(epoch, seq)
        if only is not None:
            head["nodes"] = [row for row in head["nodes"] if row["node_id"] == only]
        out = [served(record, LOCAL, 0) for record in self.local] if only in (None, self.node_id) else []
        for row, kept in self.peers:
            if only is None or row["node_id"] == only:
                out += [served(record, row["peer_state"], row["peer_age_ms"]) for record in kept]
        return {**head, "records": out}

    def nodes(self) -> list[dict[str, Any]]:
        """The document's ``nodes``, without making its records."""
        return list(self._head(0, 0)["nodes"])

    def text(self, epoch: int, seq: int, texts: Texts) -> str:
        """:meth:`document` as JSON text, each peer record's from ``texts`` with its node's
        standing put after its last field, as the document has it."""
        parts = [dumps(served(record, LOCAL, 0)) for record in self.local]
        for row, kept in self.peers:
            if not kept:
                continue
            standing = f'"peer_state":{dumps(row["peer_state"])},"peer_age_ms":{dumps(row["peer_age_ms"])}}}'
            parts.append(f"{standing},".join(map(texts.opening, kept)) + standing)
        if len(texts) > 2 * sum(len(kept) for _, kept in self.peers) + 1024:
            texts.keep_only(record for _, kept in self.peers for record in kept)
        # The head and the brackets put on the first and last parts, not around the whole: the
        # union's 40 MB are copied by the one join below, not twice more to be enclosed.
        parts = parts or [""]
        parts[0] = f"{opened(self._head(epoch, seq), 'records')}[{parts[0]}"
        parts[-1] = f"{parts[-1]}]}}"
        return ",".join(parts)

    def _head(self, epoch: int, seq: int) -> dict[str, Any]:
        itself = {"node": self.node, "node_id": self.node_id, "peer_state": LOCAL, "peer_age_ms": 0}
        rows = [{**itself, "sessions": len(self.local), "dropped": 0, "terminals": _listed(self.terminals)}]
        rows += [row for row, _ in self.peers]
        return {
            "schema": SCHEMA,
            "node": self.node,
            "node_id": self.node_id,
            "status_epoch": epoch,
            "seq": seq,
            "generated_at": to_wire(self.at),
            "nodes": rows,
        }


class Whole(Mapping[str, Any]):
    """A union document made only when it is read: a ``snapshot`` change that a client may
    have written out as text (:meth:`text`) without it ever being made as a document."""

    def __init__(self, view: View, epoch: int, seq: int, texts: Texts) -> None:
        self._view, self._epoch, self._seq, self._texts = view, epoch, seq, texts
        self._made: dict[str, Any] | None = None

    def text(self) -> str:
        return self._view.text(self._epoch, self._seq, self._texts)

    def narrowed(self, only: str) -> dict[str, Any]:
        """The document with node ``only``'s row and records alone."""
        return self._view.document(self._epoch, self._seq, only)

    def _doc(self) -> dict[str, Any]:
        if self._made is None:
            self._made = self._view.document(self._epoch, self._seq)
        return self._made

    def __getitem__(self, key: str) -> Any:
        return self._doc()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._doc())

    def __len__(self) -> int:
        return len(self._doc())


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
            tuple(peer.records.values()),
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
