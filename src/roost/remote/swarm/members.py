"""Member records and the rule that merges them: who is in the swarm, as every node learns it.

A record says one node's name, keys and address, whether it is revoked, when it was signed
(``signed_at``, Unix milliseconds) and by whom (``signer``, a node id), with the signer's
Ed25519 signature over its canonical JSON (:mod:`roost.remote.swarm.canonical`). What a record may
do depends on who signed it (``docs/swarm.md``, "The trust model", has the why):

- **An introduction** (signed by another member, not revoked) brings a node in, once. It
  counts when the node is unknown here, or has left and the introduction is newer than its
  leaving. Any other introduction of a known node is dropped (``not_own``): an admitter's
  signature introduces a node and no more.
- **A node's own record** (signed by the node itself, a current member) changes its name,
  address and certificate; the newest counts. Nothing else can change them.
- **Leaving** is a node's own record with ``revoked``; a member may introduce it again later.
- **A revocation** (``revoked``, signed by another current member) is final: the node stays
  revoked whatever any record says after it, whatever its date. A revocation of a node not
  known here is kept too, so that its introduction, arriving later, cannot bring it in. A
  revoked node's signature counts for nothing, but for one record: the revocation of the very
  member that revoked it (two members that revoke each other are both out, in whichever order
  a node hears of it, rather than whichever came first).

Whatever its signer, a record's public key must be the one already known for its node (a new
key is a new node), and a record dated more than ``FUTURE_MS`` ahead of this node's clock is
dropped (it would win every later change of the node's own).

Records are merged to a fixed point, so a batch that holds an introduction and records signed
by the introduced node counts both, whatever their order. A limit, written down in the doc:
an introduction signed by a member that is revoked by the time this node hears of it is
dropped, while a node that heard of it first keeps it; ``rosterd revoke --admitted`` revokes
the nodes a revoked member admitted, everywhere.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from roost.base.errors import PeerRefused
from roost.remote.swarm import canonical, fields
from roost.remote.swarm.fields import b64, unb64
from roost.remote.swarm.identity import Identity, certificate_key

FUTURE_MS = 60 * 1000
"""How far ahead of this node's clock a record may be dated: the signed requests' skew."""
MAX_MEMBERS = 1024
RECORD_MAX = 2048
"""Bytes of canonical JSON a member record takes at most: its longest fields (a 64-character
name, a 256-character address, its certificate, keys and signature) come to ~1.2 KiB."""
MAX_SET_DOCUMENT = 2 * MAX_MEMBERS * RECORD_MAX + canonical.MAX_DOCUMENT
"""Bytes a document that carries the whole member set may take: ``swarm.json``, a join's
answer, a hello to a node never heard from, a revoked node's last word. Each member is its
record and its introduction, ~1.4 KiB together, so such a document passed the 1 MiB every
other peer document is held to at ~700 members, short of :data:`MAX_MEMBERS`."""


@dataclass(frozen=True)
class Member:
    """A checked member record; ``document`` is the record as signed, unknown fields kept."""

    node_id: str
    name: str
    public_key: bytes
    x25519_public_key: bytes
    address: str
    signed_at: int
    signer: str
    revoked: bool
    document: dict[str, object] = field(repr=False, compare=False)
    certificate: bytes | None = field(default=None, repr=False)
    """The node's TLS certificate (DER) when the record carries one: what peers pin at the
    handshake. Its key is the record's ``public_key``, or the record is not parsed."""

    @property
    def own(self) -> bool:
        """Signed by the node it describes."""
        return self.signer == self.node_id

    @property
    def left(self) -> bool:
        """The node's own leaving: a member may introduce it again."""
        return self.revoked and self.own

    @property
    def revoked_by_other(self) -> bool:
        """Another member's revocation of the node: final."""
        return self.revoked and not self.own


@dataclass(frozen=True)
class Standing:
    """One node as this node knows it: the record it counts by now, the introduction that
    brought it in (None for the swarm's first node, and for a node known only as revoked)."""

    current: Member
    introduction: Member | None = None

    @property
    def admitted_by(self) -> str | None:
        return self.introduction.signer if self.introduction is not None else None

    @property
    def active(self) -> bool:
        """A member now: neither left nor revoked."""
        return not self.current.revoked

    def documents(self) -> list[dict[str, object]]:
        """The records another node needs to know this node as this one does."""
        intro = self.introduction
        if intro is None or intro.document == self.current.document:
            return [self.current.document]
        return [intro.document, self.current.document]


def certificate(value: object, public_key: bytes) -> bytes | None:
    """A certificate field's DER when it is base64url of a self-signed certificate of exactly
    ``public_key``; None otherwise."""
    der = unb64(value)
    return der if der is not None and certificate_key(der) == public_key else None


def record(
    signer: Identity,
    *,
    node_id: str,
    name: str,
    public_key: bytes,
    x25519_public_key: bytes,
    address: str,
    now: float,
    revoked: bool = False,
    certificate: bytes | None = None,
) -> dict[str, object]:
    """A member record for ``node_id``, signed by ``signer`` at ``now`` (Unix seconds), with the
    node's TLS ``certificate`` when it is known."""
    document: dict[str, object] = {
        "node_id": node_id,
        "name": name,
        "public_key": b64(public_key),
        "x25519_public_key": b64(x25519_public_key),
        "address": address,
        "signed_at": int(now * 1000),
        "signer": signer.node_id,
        "revoked": revoked,
    }
    if certificate is not None:
        document["certificate"] = b64(certificate)
    signed = canonical.sign(document, signer)
    if parse(signed) is None:
        raise ValueError("a member record needs a node id, a name (no '/') and an address of one line")
    return signed


def of(signer: Identity, member: Member, *, now: float, revoked: bool) -> dict[str, object]:
    """``signer``'s record of a node it knows as ``member``: an introduction, a revocation."""
    return record(
        signer,
        node_id=member.node_id,
        name=member.name,
        public_key=member.public_key,
        x25519_public_key=member.x25519_public_key,
        address=member.address,
        now=now,
        revoked=revoked,
        certificate=member.certificate,
    )


def own_record(
    identity: Identity, name: str, address: str, now: float, *, revoked: bool = False
) -> dict[str, object]:
    """The record a node signs about itself: the swarm's first member's, a changed address, leaving."""
    return record(
        identity,
        node_id=identity.node_id,
        name=name,
        public_key=identity.public_key,
        x25519_public_key=identity.x25519_public_key,
        address=address,
        now=now,
        revoked=revoked,
        certificate=identity.certificate(),
    )


def parse(document: object) -> Member | None:
    """The member a record describes, its fields exactly typed; None when it is not one. The
    signature is not checked here (it needs the signer's key: :func:`merge` does it)."""
    if not isinstance(document, dict) or not isinstance(document.get(canonical.SIGNATURE), str):
        return None
    node_id = fields.node_id(document.get("node_id"))
    name = fields.name(document.get("name"))
    public_key = fields.key(document.get("public_key"))
    x25519 = fields.key(document.get("x25519_public_key"))
    address = fields.text(document.get("address"))
    signed_at = fields.integer(document.get("signed_at"))
    signer = fields.node_id(document.get("signer"))
    revoked = document.get("revoked")
    cert = None
    if "certificate" in document and public_key is not None:
        cert = certificate(document["certificate"], public_key)
        if cert is None:
            return None
    if (
        node_id is None
        or name is None
        or public_key is None
        or x25519 is None
        or address is None
        or signed_at is None
        or signer is None
        or not isinstance(revoked, bool)
    ):
        return None
    return Member(node_id, name, public_key, x25519, address, signed_at, signer, revoked, document, cert)


def _rank(member: Member) -> tuple[int, bool, bytes]:
    return (
        member.signed_at,
        member.revoked,
        canonical.unsigned(member.document) + str(member.document["signature"]).encode(),
    )


def current(standings: Mapping[str, Standing]) -> dict[str, Member]:
    """Each node's record as it counts now: what every other part of the daemon reads."""
    return {node_id: standing.current for node_id, standing in standings.items()}


def documents(standings: Mapping[str, Standing]) -> list[dict[str, object]]:
    """Every record another node needs to know the swarm as this node does, introductions first
    (a node's own records count only once it is known)."""
    intros = [document for s in standings.values() for document in s.documents()[:-1]]
    return intros + [s.current.document for s in standings.values()]


def held(standings: Mapping[str, Standing]) -> dict[str, str]:
    """What this node holds of each node, as a hash of the records :meth:`Standing.documents`
    gives: two nodes hold the same of a node exactly when these hashes agree."""
    return {
        node_id: hashlib.sha256(canonical.encode(standing.documents())).hexdigest()
        for node_id, standing in standings.items()
    }


def digest(hashes: Mapping[str, str]) -> str:
    """The whole member set :func:`held` describes, in 64 hex digits: what a hello says this node
    holds, so a peer that holds the same sends it no records."""
    return hashlib.sha256(canonical.encode(dict(hashes))).hexdigest()


def changed_since(
    standings: Mapping[str, Standing], before: Mapping[str, str], now: Mapping[str, str]
) -> list[dict[str, object]]:
    """The records of every node whose records are not what ``before`` held (new ones too),
    introductions first as in :func:`documents`: what a node that held ``before`` lacks."""
    return documents({node_id: s for node_id, s in standings.items() if before.get(node_id) != now[node_id]})


def standings(records: Iterable[object]) -> dict[str, Standing] | None:
    """The standings a trusted list of records describes (this node's own file, or its
    admitter's answer over a connection pinned to the invite's key), rebuilt without checking a
    signature; None when a record is not one. Per node: a revocation by another member if there
    is one, otherwise the newest of its introductions and own records; its newest introduction."""
    by_node: dict[str, list[Member]] = {}
    for document in records:
        member = parse(document)
        if member is None:
            return None
        by_node.setdefault(member.node_id, []).append(member)
    built: dict[str, Standing] = {}
    for node_id, found in by_node.items():
        intros = [m for m in found if not m.own and not m.revoked]
        revocations = [m for m in found if m.revoked_by_other]
        introduction = max(intros, key=_rank) if intros else None
        now = min(revocations, key=_rank) if revocations else max(found, key=_rank)
        built[node_id] = Standing(now, introduction)
    return built


@dataclass
class Merged:
    """What :func:`merge` made: the standings now, the node ids whose record changed, and each
    record dropped with its reason."""

    standings: dict[str, Standing]
    changed: list[str]
    dropped: list[tuple[str, str]]

    @property
    def members(self) -> dict[str, Member]:
        return current(self.standings)


_WAIT = ("unknown_signer", "revoked_signer")
"""Reasons a later record in the same batch can lift (an introduction, a re-introduction, the
revocation that makes a revocation mutual)."""


def _signer(standings: Mapping[str, Standing], member: Member) -> str | Member:
    """The signer's record when its signature may count for ``member``; the reason otherwise."""
    signer = standings.get(member.signer)
    if signer is None:
        return "unknown_signer"
    if signer.active:
        return signer.current
    mutual = (
        member.revoked_by_other
        and signer.current.revoked_by_other
        and signer.current.signer == member.node_id
    )
    return signer.current if mutual else "revoked_signer"


def _judge(standings: Mapping[str, Standing], document: object, now_ms: int) -> tuple[str, Member | None]:
    known = standings.get(document.get("node_id")) if isinstance(document, dict) else None  # type: ignore[arg-type]
    if known is not None and document in (
        known.current.document,
        known.introduction and known.introduction.document,
    ):
        return "same", known.current  # a record this node took already: its signature held then
    member = parse(document)
    if member is None:
        return "malformed", None
    if member.signed_at > now_ms + FUTURE_MS:
        return "future", member
    signer = _signer(standings, member)
    if isinstance(signer, str):
        return signer, member
    if not canonical.verified(member.document, signer.public_key):
        return "bad_signature", member
    known = standings.get(member.node_id)
    if known is None:  # an introduction, or the revocation of a node not known here yet
        return ("too_many", member) if len(standings) >= MAX_MEMBERS else ("accepted", member)
    if known.current.public_key != member.public_key:
        return "wrong_key", member
    if known.current.revoked_by_other:
        return ("same" if member.revoked_by_other else "revoked"), member
    if member.revoked_by_other:
        return "accepted", member
    if not member.own:  # an introduction of a node already known
        if known.current.left and member.signed_at > known.current.signed_at:
            return "accepted", member
        same = known.introduction is not None and known.introduction.document == member.document
        return ("same" if same else "not_own"), member
    if _rank(member) <= _rank(known.current):
        return ("stale" if _rank(member) < _rank(known.current) else "same"), member
    return "accepted", member


def _taken(known: Standing | None, member: Member) -> Standing:
    if member.own:
        assert known is not None
        return replace(known, current=member)
    if member.revoked:
        return Standing(member, known.introduction if known is not None else None)
    return Standing(member, member)


def merge(known: Mapping[str, Standing], incoming: Iterable[object], *, now: float) -> Merged:
    """``known`` with the records of ``incoming`` that the rule lets in (see the module's
    docstring); ``known`` itself is left as it was."""
    taken = dict(known)
    changed: list[str] = []
    dropped: list[tuple[str, str]] = []
    waiting = list(incoming)[: 4 * MAX_MEMBERS]
    now_ms = int(now * 1000)
    progress = True
    while waiting and progress:
        progress, later = False, []
        for document in waiting:
            verdict, member = _judge(taken, document, now_ms)
            if verdict == "accepted" and member is not None:
                taken[member.node_id] = _taken(taken.get(member.node_id), member)
                if member.node_id not in changed:
                    changed.append(member.node_id)
                progress = True
            elif verdict in _WAIT:
                later.append(document)
            elif verdict != "same":
                dropped.append((member.node_id if member else "?", verdict))
        waiting = later
    for document in waiting:
        verdict, member = _judge(taken, document, now_ms)
        dropped.append((member.node_id if member else "?", verdict))
    return Merged(taken, changed, dropped)


def member(members: Mapping[str, Member], node_id: str) -> Member:
    """The current, unrevoked member ``node_id``; :class:`PeerRefused` ``unknown_node`` or ``revoked``."""
    found = members.get(node_id)
    if found is None:
        raise PeerRefused(code="unknown_node", message=f"node {node_id} is not a member of this swarm")
    if found.revoked:
        raise PeerRefused(code="revoked", message=f"node {node_id} has been revoked from this swarm")
    return found
