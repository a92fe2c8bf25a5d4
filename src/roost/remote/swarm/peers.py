"""Every peer's roster as this node last heard it, kept beside its own and never merged into it.

A peer streams its own roster: a whole frame (its ``GET /snapshot`` document) when the link
opens, then one record per change, as its ``/changes`` stream carries them. :class:`Peers`
keeps the last of each, checked at the door: the frame must be the sending node's (the
transport says who sent it, the document does not get to), and every record is checked by
:func:`roost.truth.roster.recordschema.from_peer` against the same types as a local claim. A record
that fails is dropped and counted; the rest of the frame stands, so one bad record never
poisons the union, and a frame that is not a frame at all changes nothing.

Beside its roster a peer sends its terminal list, every pane of its tmux server (a plain shell
is in no roster: the roster holds sessions, and a shell is none), as its own ``GET /terminals``
gives it, whole, whenever it changes. :meth:`Peers.terminals` keeps the last, each pane
checked the same way; the union shows them so that another node's page can list that node's
terminals as it lists its own.

A peer is ``reachable`` while its link is up and ``unreachable`` once the transport says it
went away; its records stay, served from the last frame with their age (``peer_age_ms``, from
the last word heard from it), until it is back (its fresh frame replaces the stale one), it is
revoked (gone at once), or nothing has been heard from it for :data:`KEEP` seconds. A record
of a session that ended stays :data:`LINGER` seconds from when it was first kept ended and is
then dropped (:meth:`Peers.linger`), as its owner drops it from its roster, with no word on its
stream: otherwise a link that stays up keeps every session its peer ever ended, the union
holds what the owner does not, and past :data:`MAX_RECORDS` of them the peer's new sessions
are refused. Pure, with the clock as an argument, like the rest of this package.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from roost.base.errors import PeerRefused
from roost.base.validation import Invalid
from roost.remote.swarm import fields
from roost.remote.swarm.fields import MAX_NAME
from roost.truth.roster import records
from roost.truth.roster.hub import LINGER
from roost.truth.roster.recordschema import from_peer

LOCAL, REACHABLE, UNREACHABLE = "local", "reachable", "unreachable"
PEER_STATES = (LOCAL, REACHABLE, UNREACHABLE)
KEEP = 24 * 3600.0
"""Seconds an unheard peer's last frame is still served."""
MAX_RECORDS = 10_000
"""Records one peer's frame may hold: more is not a roster but a flood."""
MAX_TERMINALS = 2_000
"""Panes one peer's terminal list may hold."""
PANE = re.compile(r"%[0-9]{1,9}")
Pane = dict[str, str | None]
"""One pane of a node's terminal list: ``pane`` and the fields of :data:`TERMINAL_LIMITS`."""
TERMINAL_LIMITS = (("session", 256, False), ("window", 256, False), ("name", 200, True),
                   ("command", 256, False), ("cwd", 4096, True))  # fmt: skip
"""What a peer's terminal says besides its ``pane`` (``%N``): the fields of its
``GET /terminals``, each one line of at most so many characters (``name`` and ``cwd`` may be
null), less its own session key and state, which the union's records say."""


@dataclass
class Peer:
    """One peer as last heard: its name, its records by key, and how its link stands."""

    node_id: str
    node: str
    heard_at: float
    reachable: bool = True
    records: dict[str, records.Record] = field(default_factory=dict)
    dropped: int = 0
    """Records refused from this peer since it was first heard (a buggy or hostile sender)."""
    terminals: tuple[Pane, ...] | None = None
    """Its panes as it last listed them; None until it has (a node older than this list)."""
    ended: dict[str, float] = field(default_factory=dict)
    """When each of its ended records was first kept ended, by this node's clock."""

    def state(self) -> str:
        return REACHABLE if self.reachable else UNREACHABLE

    def age_ms(self, now: float) -> int:
        return max(0, round((now - self.heard_at) * 1000))


def _field(value: object, limit: int, nullable: bool) -> bool:
    """A terminal's field: one line of at most ``limit`` characters (or null, where it may be)."""
    if value is None:
        return nullable
    return isinstance(value, str) and len(value) <= limit and value.isprintable()


def _terminal(doc: object) -> Pane | None:
    """One pane of a peer's terminal list, or None when any field is not what a pane says."""
    if not isinstance(doc, Mapping):
        return None
    pane = doc.get("pane")
    if not isinstance(pane, str) or not PANE.fullmatch(pane):
        return None
    kept: Pane = {"pane": pane}
    for name, limit, nullable in TERMINAL_LIMITS:
        value = doc.get(name)
        if not _field(value, limit, nullable):
            return None
        kept[name] = value if isinstance(value, str) else None
    return kept


def _checked(doc: object, node_id: str, name: str) -> records.Record | None:
    """A peer's record, named after the node that sent it (whatever name the record gives)."""
    try:
        record = from_peer(doc, node_id)
    except Invalid:
        return None
    return record if record.node == name else record.replace(node=name)


class Peers:
    """The last frame of every peer, by node id; this node's own id is never a peer."""

    def __init__(self, own_id: str) -> None:
        self.own_id = own_id
        self._peers: dict[str, Peer] = {}

    def frame(self, node_id: str, document: object, now: float, known_as: str | None = None) -> Peer:
        """A whole roster from ``node_id`` replaces what was kept of it. PeerRefused (code
        ``malformed``) when it is not a snapshot document of that node; nothing changes then.
        ``known_as`` is the node's name as its member record says it (the frame's own ``node`` must
        be one line, and is used only when no record names it): a peer speaks for itself, and
        cannot go by another member's name in the union."""
        if node_id == self.own_id:
            raise PeerRefused("a node's own roster is not a peer's", code="malformed")
        if not isinstance(document, Mapping) or document.get("schema") != records.SCHEMA:
            raise PeerRefused(f"not a {records.SCHEMA} document", code="malformed")
        if document.get("node_id") != node_id:
            raise PeerRefused("the frame speaks for another node", code="malformed")
        listed = document.get("records")
        name = fields.text(document.get("node"), MAX_NAME)
        if not isinstance(listed, list) or len(listed) > MAX_RECORDS or name is None:
            wanted = f"a frame holds the node's name, one line, and at most {MAX_RECORDS} records"
            raise PeerRefused(wanted, code="malformed")
        earlier = self._peers.get(node_id)
        name = known_as or name
        peer = Peer(node_id, name, now, dropped=earlier.dropped if earlier else 0)
        peer.terminals = earlier.terminals if earlier else None
        for doc in listed:
            record = _checked(doc, node_id, name)
            if record is None:
                peer.dropped += 1
            else:
                peer.records[record.session_key] = record
                if record.liveness == records.ENDED:
                    peer.ended[record.session_key] = (
                        earlier.ended.get(record.session_key, now) if earlier else now
                    )
        self._peers[node_id] = peer
        return peer

    def change(self, node_id: str, document: object, now: float) -> records.Record | None:
        """One record of ``node_id`` as it changed; the record kept, or None when it was
        dropped (a bad record, or a peer with no frame yet: a change needs a frame before it)."""
        peer = self._peers.get(node_id)
        if peer is None:
            return None
        record = _checked(document, node_id, peer.node)
        if record is None or (record.session_key not in peer.records and len(peer.records) >= MAX_RECORDS):
            peer.dropped += 1
            return None
        kept = peer.records.get(record.session_key)
        if kept is not None and kept.status_epoch == record.status_epoch and kept.revision > record.revision:
            return kept  # an older revision arriving late never replaces a newer one
        peer.records[record.session_key] = record
        if record.liveness == records.ENDED:
            peer.ended.setdefault(record.session_key, now)
        peer.heard_at, peer.reachable = now, True
        return record

    def terminals(self, node_id: str, document: object, now: float) -> bool:
        """``node_id``'s terminal list as it sent it, whole (``{"terminals": [pane, …]}``);
        whether it differs from the one kept. A pane that is not one is dropped and counted,
        the rest kept; PeerRefused (``malformed``) when it is no list at all, or a peer with
        no frame yet: nothing changes then."""
        peer = self._peers.get(node_id)
        listed = document.get("terminals") if isinstance(document, Mapping) else None
        if peer is None or not isinstance(listed, list) or len(listed) > MAX_TERMINALS:
            wanted = f"a terminal list follows a frame and holds at most {MAX_TERMINALS} panes"
            raise PeerRefused(wanted, code="malformed")
        kept = []
        for doc in listed:
            pane = _terminal(doc)
            if pane is None:
                peer.dropped += 1
            else:
                kept.append(pane)
        peer.heard_at, peer.reachable = now, True
        if peer.terminals == tuple(kept):
            return False
        peer.terminals = tuple(kept)
        return True

    def heard(self, node_id: str, now: float) -> None:
        """A keep-alive (or any word) from ``node_id``: its link is up."""
        peer = self._peers.get(node_id)
        if peer is not None:
            peer.heard_at, peer.reachable = now, True

    def lost(self, node_id: str) -> None:
        """The link to ``node_id`` went away: its last frame is served, marked, until it is back."""
        peer = self._peers.get(node_id)
        if peer is not None:
            peer.reachable = False

    def rename(self, node_id: str, name: str) -> bool:
        """``node_id``'s member record now gives it ``name``: its records are served under it from
        now on, not only from its next frame. Whether anything changed."""
        peer = self._peers.get(node_id)
        if peer is None or peer.node == name:
            return False
        peer.node = name
        peer.records = {key: record.replace(node=name) for key, record in peer.records.items()}
        return True

    def forget(self, node_id: str) -> bool:
        """Drop ``node_id`` at once (it was revoked, or left); whether anything was kept of it."""
        return self._peers.pop(node_id, None) is not None

    def linger(self, now: float) -> int:
        """Drop every peer's record that ended :data:`LINGER` seconds ago or more, as its owner
        has dropped it from its roster by then; how many were dropped."""
        dropped = 0
        for peer in self._peers.values():
            for key in [key for key, ended in peer.ended.items() if now - ended >= LINGER]:
                del peer.ended[key]
                peer.records.pop(key, None)
                dropped += 1
        return dropped

    def expire(self, now: float) -> list[str]:
        """Drop every peer unheard for :data:`KEEP` seconds; the node ids dropped."""
        old = [ident for ident, peer in self._peers.items() if now - peer.heard_at >= KEEP]
        for ident in old:
            del self._peers[ident]
        return old

    def get(self, node_id: str) -> Peer | None:
        return self._peers.get(node_id)

    def all(self) -> list[Peer]:
        return sorted(self._peers.values(), key=lambda peer: (peer.node, peer.node_id))

    def find(self, name: str) -> list[records.Record]:
        """Peers' live records that ``name`` names: an exact session key, or a display name."""
        found = []
        for peer in self.all():
            exact = peer.records.get(name)
            if exact is not None:
                return [exact]
            found += [
                record
                for record in peer.records.values()
                if record.name == name and record.liveness != records.ENDED
            ]
        return found
