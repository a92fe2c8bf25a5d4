"""The hello: a node's signed greeting, sent when it joins and on every connection after.

``{node_id, name, public_key, x25519_public_key, version, swarm_id, address, capabilities,
members, digest, signed_at, certificate, signature}``, signed by the node's own Ed25519 key over
its canonical JSON (unknown fields kept and covered). It proves the sender holds ``public_key``
and binds its X25519 key to it; whether that key is a member's is the member records' question.
``members`` carries member records so membership gossips in every hello: every record the
sender knows, or, when it knows which member set the recipient holds, only what that set
lacks, none when the two agree (``digest`` names the set the sender holds). A hello travels in
a signed request (:mod:`roost.remote.swarm.signing`), which is what refuses a replay of it.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass, field

from roost.base.errors import PeerRefused
from roost.remote.swarm import canonical, fields
from roost.remote.swarm.fields import b64, unb64
from roost.remote.swarm.identity import Identity, certificate_key
from roost.remote.swarm.members import MAX_MEMBERS, Member

MAX_CAPABILITIES = 64


@dataclass(frozen=True)
class Hello:
    node_id: str
    name: str
    public_key: bytes
    x25519_public_key: bytes
    version: str
    swarm_id: str
    address: str
    capabilities: tuple[str, ...]
    members: list[object] = field(repr=False)
    """The member records as sent, unchecked: :func:`roost.remote.swarm.members.merge` judges them."""
    signed_at: int
    document: dict[str, object] = field(repr=False, compare=False)
    certificate: bytes | None = field(default=None, repr=False)
    """The sender's TLS certificate (DER), which its admitter copies into its member record."""
    digest: str | None = None
    """The member set the sender holds (:func:`roost.remote.swarm.members.digest`), None from a
    node that does not say: ``members`` then carries every record it knows."""


def make(
    identity: Identity,
    *,
    name: str,
    version: str,
    swarm_id: str,
    address: str,
    capabilities: list[str],
    members: list[dict[str, object]],
    now: float,
    digest: str | None = None,
) -> dict[str, object]:
    """``identity``'s hello at ``now``, signed; ``digest`` names the member set the sender holds,
    of which ``members`` may carry only what the recipient lacks."""
    document: dict[str, object] = {
        "node_id": identity.node_id,
        "name": name,
        "public_key": identity.public_b64,
        "x25519_public_key": identity.x25519_public_b64,
        "version": version,
        "swarm_id": swarm_id,
        "address": address,
        "capabilities": list(capabilities),
        "members": list(members),
        "signed_at": int(now * 1000),
        "certificate": b64(identity.certificate()),
    }
    if digest is not None:
        document["digest"] = digest
    signed = canonical.sign(document, identity)
    if _parse(signed) is None:
        raise ValueError("a hello needs a node id, name, version, swarm id and address of one line")
    return signed


def _parse(document: object) -> Hello | None:
    if not isinstance(document, dict):
        return None
    node_id = fields.node_id(document.get("node_id"))
    name = fields.name(document.get("name"))
    public_key = fields.key(document.get("public_key"))
    x25519 = fields.key(document.get("x25519_public_key"))
    version = fields.text(document.get("version"), 64)
    swarm_id = fields.hex_text(document.get("swarm_id"), 32)
    address = fields.text(document.get("address"))
    capabilities = document.get("capabilities")
    records = document.get("members")
    signed_at = fields.integer(document.get("signed_at"))
    cert = unb64(document["certificate"]) if "certificate" in document else None
    if "certificate" in document and cert is None:
        return None
    digest = fields.hex_text(document["digest"], 64) if "digest" in document else None
    if "digest" in document and digest is None:
        return None
    if (
        node_id is None
        or name is None
        or public_key is None
        or x25519 is None
        or version is None
        or swarm_id is None
        or address is None
        or signed_at is None
        or not isinstance(capabilities, list)
        or len(capabilities) > MAX_CAPABILITIES
        or any(fields.text(item, 64) is None for item in capabilities)
        or not isinstance(records, list)
        or len(records) > 2 * MAX_MEMBERS
    ):
        return None
    return Hello(
        node_id,
        name,
        public_key,
        x25519,
        version,
        swarm_id,
        address,
        tuple(capabilities),
        records,
        signed_at,
        document,
        cert,
        digest,
    )


def verify(document: object, *, swarm_id: str, members: Mapping[str, Member]) -> Hello:
    """The hello ``document`` is, when it is well formed, for ``swarm_id`` and signed by the key
    it names, which must be the member's key when the node is a known member; :class:`PeerRefused`
    otherwise (``malformed``, ``other_swarm``, ``wrong_key``, ``bad_signature``). A joiner's
    hello passes with a key no member has yet: the admitter decides on its invite."""
    hello = _parse(document)
    if hello is None:
        raise PeerRefused(code="malformed", message="the hello is not one roost sends")
    if not hmac.compare_digest(hello.swarm_id, swarm_id):
        raise PeerRefused(code="other_swarm", message="the hello is from another swarm")
    known = members.get(hello.node_id)
    if known is not None and not hmac.compare_digest(known.public_key, hello.public_key):
        raise PeerRefused(code="wrong_key", message=f"node {hello.node_id} is a member with another key")
    if not canonical.verified(hello.document, hello.public_key):
        raise PeerRefused(code="bad_signature", message="the hello's signature is not its node's")
    if hello.certificate is not None and certificate_key(hello.certificate) != hello.public_key:
        raise PeerRefused(code="malformed", message="the hello's certificate is not its node's key")
    return hello
