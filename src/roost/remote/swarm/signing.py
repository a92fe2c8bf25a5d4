"""A signed request from one node to another: who sent it, and that nothing was changed.

The sender adds six headers:

- ``x-roost-node``: its node id;
- ``x-roost-to``: the node id of the member it is meant for;
- ``x-roost-timestamp``: Unix seconds, decimal;
- ``x-roost-nonce``: 32 hex digits, fresh per request;
- ``x-roost-swarm``: hex sha256 of the swarm key (names the swarm, gives no key away);
- ``x-roost-signature``: base64url Ed25519 over
  ``roost-request-v2 \\n METHOD \\n PATH_WITH_QUERY \\n TO \\n TIMESTAMP \\n NONCE \\n hex(sha256(body))``.

The query string and the nonce are signed, so a request cannot be pointed at other
arguments, and a captured one cannot be sent again: the receiver keeps every nonce it
accepted for as long as its timestamp is within ``SKEW`` (:class:`Nonces`). The recipient is
signed, so a request one member received cannot be replayed by it to a third as the sender's
(a JWT's ``aud``, RFC 9421's signed authority).

The check comes in two steps, so that a receiver spends nothing on a body before it knows
who sends it (:func:`claimed`: the headers, before a byte of the body is read; then
:func:`proven`: the signature over the body, and the nonce).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field

from roost.base.errors import PeerRefused
from roost.remote.swarm import fields
from roost.remote.swarm.fields import b64, unb64
from roost.remote.swarm.identity import Identity, verify
from roost.remote.swarm.members import Member, member

NODE = "x-roost-node"
TO = "x-roost-to"
TIMESTAMP = "x-roost-timestamp"
NONCE = "x-roost-nonce"
SWARM = "x-roost-swarm"
SIGNATURE = "x-roost-signature"
HEADERS = (NODE, TO, TIMESTAMP, NONCE, SWARM, SIGNATURE)
VERSION = "roost-request-v2"
SKEW = 60
"""Seconds a request's timestamp may differ from the receiver's clock, either way."""
MAX_NONCES = 65536
MAX_PATH = 8192
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def signed_text(method: str, path_with_query: str, to: str, timestamp: str, nonce: str, body: bytes) -> bytes:
    """The exact bytes the signature covers."""
    digest = hashlib.sha256(body).hexdigest()
    return f"{VERSION}\n{method}\n{path_with_query}\n{to}\n{timestamp}\n{nonce}\n{digest}".encode()


def _path(path_with_query: object) -> str | None:
    """A request target as signed: starts with ``/``, printable ASCII, no spaces (no newline
    can move a field of the signed text)."""
    if not isinstance(path_with_query, str) or not 0 < len(path_with_query) <= MAX_PATH:
        return None
    if not path_with_query.startswith("/") or not all(33 <= ord(c) < 127 for c in path_with_query):
        return None
    return path_with_query


def sign(
    identity: Identity,
    swarm_key: bytes,
    method: str,
    path_with_query: str,
    body: bytes,
    *,
    to: str,
    now: float,
) -> dict[str, str]:
    """The headers that make this request ``identity``'s, for member ``to`` only, at ``now``."""
    if method not in METHODS or _path(path_with_query) is None or fields.node_id(to) is None:
        raise ValueError(f"cannot sign {method} {path_with_query!r} for {to!r}")
    timestamp, nonce = str(int(now)), secrets.token_hex(16)
    signature = identity.sign(signed_text(method, path_with_query, to, timestamp, nonce, body))
    return {
        NODE: identity.node_id,
        TO: to,
        TIMESTAMP: timestamp,
        NONCE: nonce,
        SWARM: hashlib.sha256(swarm_key).hexdigest(),
        SIGNATURE: b64(signature),
    }


@dataclass
class Nonces:
    """The nonces accepted within the skew window, per sender; older ones are forgotten,
    since a request that old is refused for its timestamp anyway."""

    seen: dict[tuple[str, str], int] = field(default_factory=dict)
    """(node id, nonce) → the request's timestamp."""
    limit: int = MAX_NONCES

    def forget(self, now: float) -> None:
        self.seen = {entry: stamp for entry, stamp in self.seen.items() if stamp + SKEW >= now}

    def add(self, node_id: str, nonce: str, timestamp: int, now: float) -> None:
        """Remember a nonce; :class:`PeerRefused` ``replayed`` when it is already here, or
        ``too_many`` when the window holds ``limit`` (the request is refused, never a nonce
        forgotten early)."""
        entry = (node_id, nonce)
        if entry in self.seen:
            raise PeerRefused(code="replayed", message="this request was already received")
        if len(self.seen) >= self.limit:
            self.forget(now)
            if len(self.seen) >= self.limit:
                raise PeerRefused(code="too_many", message="too many requests within the skew window")
        self.seen[entry] = timestamp


def _headers(headers: Mapping[str, str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, value in headers.items():
        lowered = name.lower()
        if lowered in HEADERS:
            if lowered in found:
                raise PeerRefused(code="malformed", message=f"the request has {lowered} twice")
            found[lowered] = value
    missing = [name for name in HEADERS if name not in found]
    if missing:
        raise PeerRefused(
            code="malformed", message=f"the request is not signed: {', '.join(missing)} missing"
        )
    return found


def _timestamp(text: str) -> int | None:
    """Decimal Unix seconds as ``str(int)`` writes them: no sign, no leading zero, no space."""
    if not text.isascii() or not text.isdigit() or len(text) > 12 or str(int(text)) != text:
        return None
    return int(text)


@dataclass(frozen=True)
class Claimed:
    """A request's signature headers, checked as far as they can be without its body: a
    current member of this swarm says it sent it to this node, within the skew window."""

    sender: Member
    method: str
    target: str
    to: str
    timestamp: int
    nonce: str
    signature: bytes


def claimed(
    method: str,
    path_with_query: str,
    headers: Mapping[str, str],
    *,
    members: Mapping[str, Member],
    swarm_key: bytes,
    recipient: str,
    now: float,
    revoked: bool = False,
) -> Claimed:
    """What the headers of a request claim; :class:`PeerRefused` otherwise: ``malformed``,
    ``other_swarm``, ``wrong_recipient`` (signed for another node), ``unknown_node``,
    ``revoked`` (unless ``revoked`` allows a revoked sender: the door hears a revoked node's
    last word, see :class:`roost.remote.mesh.listener.Signed`), ``skew``, in that order. Nothing here
    is proven yet: :func:`proven` is."""
    found = _headers(headers)
    node_id, to, timestamp = (
        fields.node_id(found[NODE]),
        fields.node_id(found[TO]),
        _timestamp(found[TIMESTAMP]),
    )
    nonce, swarm = fields.hex_text(found[NONCE], 32), fields.hex_text(found[SWARM], 64)
    signature = unb64(found[SIGNATURE], 64)
    if (
        node_id is None
        or to is None
        or timestamp is None
        or nonce is None
        or swarm is None
        or signature is None
    ):
        raise PeerRefused(code="malformed", message="the request's signature headers are not roost's")
    if method not in METHODS or _path(path_with_query) is None:
        raise PeerRefused(code="malformed", message="the request's method or path cannot be signed")
    if not hmac.compare_digest(swarm, hashlib.sha256(swarm_key).hexdigest()):
        raise PeerRefused(code="other_swarm", message="the request is from another swarm")
    if to != recipient:  # ids are no secret: a plain comparison
        raise PeerRefused(code="wrong_recipient", message="the request was signed for another node")
    sender = members.get(node_id) if revoked else None
    sender = sender or member(members, node_id)
    if abs(now - timestamp) > SKEW:
        raise PeerRefused(code="skew", message=f"the request's clock is more than {SKEW} s from this node's")
    return Claimed(sender, method, path_with_query, to, timestamp, nonce, signature)


def proven(claim: Claimed, body: bytes, *, nonces: Nonces, now: float) -> Member:
    """The member that sent this request, once its signature over the body holds and its nonce
    is new; :class:`PeerRefused` ``bad_signature``, ``replayed`` or ``too_many`` otherwise (a
    nonce is remembered only once the signature holds, so a forged request cannot use up a
    real one's)."""
    text = signed_text(claim.method, claim.target, claim.to, str(claim.timestamp), claim.nonce, body)
    if not verify(claim.sender.public_key, claim.signature, text):
        raise PeerRefused(code="bad_signature", message="the request's signature is not its node's")
    nonces.add(claim.sender.node_id, claim.nonce, claim.timestamp, now)
    return claim.sender


def verify_request(
    method: str,
    path_with_query: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    members: Mapping[str, Member],
    swarm_key: bytes,
    recipient: str,
    nonces: Nonces,
    now: float,
) -> Member:
    """The member that sent this request to ``recipient``: :func:`claimed`, then :func:`proven`."""
    claim = claimed(
        method, path_with_query, headers, members=members, swarm_key=swarm_key, recipient=recipient, now=now
    )
    return proven(claim, body, nonces=nonces, now=now)
