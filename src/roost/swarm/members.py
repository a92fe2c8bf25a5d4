"""Member records and the rule that merges them: who is in the swarm, as every node learns it.

A record says one node's name, keys and address, whether it is revoked, when it was signed
(``signed_at``, Unix milliseconds) and by whom (``signer``, a node id), with the signer's
Ed25519 signature over its canonical JSON (:mod:`roost.swarm.canonical`). The merge rule, in
full (``docs/swarm.md`` has it as a table):

1. A record counts only when its signer is a member this node knows and has not revoked, and
   the signature is that member's. So a node enters the swarm only by a member's record (its
   admitter's); a record a node signs about itself counts once it is a member, which is how
   it changes its own address or name, and how it leaves (revokes itself).
2. A node's public key never changes: a record that gives a known node another key is
   dropped. A new key is a new node, admitted anew.
3. Per node, the newest ``signed_at`` wins; at the same instant a revocation wins; two
   records equal in both are ordered by their canonical bytes, so every node picks the same.
4. A revoked node signs nothing that counts (rule 1), so it cannot un-revoke itself. A
   member may re-admit it with a newer record; the key stays the one it had (rule 2).
5. A record dated more than ``FUTURE_MS`` ahead of this node's clock is dropped: it would
   otherwise win every later change.

Records are merged to a fixed point, so a batch that holds an admission and records signed by
the admitted node counts both, whatever their order. Records a now-revoked member signed
before its revocation stay where they were already known; a node that learns of them only
after the revocation drops them, and a remaining member must sign them again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from roost.errors import PeerRefused
from roost.swarm import canonical, fields
from roost.swarm.identity import Identity, b64, certificate_key, unb64

FUTURE_MS = 5 * 60 * 1000
MAX_MEMBERS = 1024
MAX_NAME = 64


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
        raise ValueError("a member record needs a node id, a name and an address of one line")
    return signed


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
    name = fields.text(document.get("name"), MAX_NAME)
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


@dataclass
class Merged:
    """What :func:`merge` made: the members now, the node ids whose record changed, and each
    record dropped with its reason."""

    members: dict[str, Member]
    changed: list[str]
    dropped: list[tuple[str, str]]


_WAIT = ("unknown_signer", "revoked_signer")
"""Reasons a later record in the same batch can lift (an admission, a re-admission)."""


def _judge(members: Mapping[str, Member], document: object, now_ms: int) -> tuple[str, Member | None]:
    member = parse(document)
    if member is None:
        return "malformed", None
    if member.signed_at > now_ms + FUTURE_MS:
        return "future", member
    signer = members.get(member.signer)
    if signer is None:
        return "unknown_signer", member
    if signer.revoked:
        return "revoked_signer", member
    if not canonical.verified(member.document, signer.public_key):
        return "bad_signature", member
    current = members.get(member.node_id)
    if current is not None and current.public_key != member.public_key:
        return "wrong_key", member
    if current is not None and _rank(member) <= _rank(current):
        return "stale" if _rank(member) < _rank(current) else "same", member
    if current is None and len(members) >= MAX_MEMBERS:
        return "too_many", member
    return "accepted", member


def merge(known: Mapping[str, Member], incoming: Iterable[object], *, now: float) -> Merged:
    """``known`` with the records of ``incoming`` that the rule lets in (see the module's
    docstring); ``known`` itself is left as it was."""
    members = dict(known)
    changed: list[str] = []
    dropped: list[tuple[str, str]] = []
    waiting = list(incoming)[: 4 * MAX_MEMBERS]
    now_ms = int(now * 1000)
    progress = True
    while waiting and progress:
        progress, later = False, []
        for document in waiting:
            verdict, member = _judge(members, document, now_ms)
            if verdict == "accepted" and member is not None:
                members[member.node_id] = member
                if member.node_id not in changed:
                    changed.append(member.node_id)
                progress = True
            elif verdict in _WAIT:
                later.append(document)
            elif verdict != "same":
                dropped.append((member.node_id if member else "?", verdict))
        waiting = later
    for document in waiting:
        verdict, member = _judge(members, document, now_ms)
        dropped.append((member.node_id if member else "?", verdict))
    return Merged(members, changed, dropped)


def member(members: Mapping[str, Member], node_id: str) -> Member:
    """The current, unrevoked member ``node_id``; :class:`PeerRefused` ``unknown_node`` or ``revoked``."""
    found = members.get(node_id)
    if found is None:
        raise PeerRefused(code="unknown_node", message=f"node {node_id} is not a member of this swarm")
    if found.revoked:
        raise PeerRefused(code="revoked", message=f"node {node_id} has been revoked from this swarm")
    return found
