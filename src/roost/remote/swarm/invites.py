"""The invite: a single-use token that lets one machine join the swarm.

``base64url(JSON{swarm_id, nonce, expires_at, admitter, admitter_public_key,
admitter_address})`` + ``.`` + hex HMAC-SHA256 of that base64url text under the 32-byte
swarm key. The joiner cannot check the tag and only reads the admitter's key and address
from it (:func:`read`) to pin the admitter's certificate.

A token is honoured by the node that made it and by no other (:func:`check`): that node keeps
the nonce of every invite it made while it is open, and burns it in the same step that
admits, so a token admits once in the whole swarm without any node having to tell another
first, and a copy of the swarm key (a revoked member still holds one) makes no token anyone
honours. Another member refuses it as ``not_admitter`` and names the node to ask.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from collections.abc import MutableMapping
from dataclasses import dataclass

from roost.base.errors import PeerRefused, UsageError
from roost.remote.swarm import canonical, fields
from roost.remote.swarm.identity import Identity

MIN_TTL_MINUTES = 1
MAX_TTL_MINUTES = 7 * 24 * 60
DEFAULT_TTL_MINUTES = 60
MAX_TOKEN = 2048
"""A token longer than this is refused before anything is decoded."""
NONCE_HEX = 32
TAG_HEX = 64


@dataclass(frozen=True)
class Invite:
    swarm_id: str
    nonce: str
    expires_at: int
    """Unix seconds; the token is refused from this second on."""
    admitter: str
    admitter_public_key: bytes
    admitter_address: str


def _tag(body: str, swarm_key: bytes) -> str:
    return hmac.new(swarm_key, body.encode("ascii"), hashlib.sha256).hexdigest()


def make(
    swarm_id: str,
    swarm_key: bytes,
    admitter: Identity,
    address: str,
    *,
    now: float,
    ttl_minutes: int = DEFAULT_TTL_MINUTES,
) -> str:
    """A fresh token from ``admitter`` (reachable at ``address``), good for ``ttl_minutes``."""
    if type(ttl_minutes) is not int or not MIN_TTL_MINUTES <= ttl_minutes <= MAX_TTL_MINUTES:
        raise UsageError(f"an invite lasts {MIN_TTL_MINUTES} to {MAX_TTL_MINUTES} minutes, not {ttl_minutes}")
    body = {
        "swarm_id": swarm_id,
        "nonce": secrets.token_hex(NONCE_HEX // 2),
        "expires_at": int(now) + ttl_minutes * 60,
        "admitter": admitter.node_id,
        "admitter_public_key": admitter.public_b64,
        "admitter_address": address,
    }
    if _invite(body) is None:
        raise UsageError("an invite needs a swarm id, a node id and an address of one line")
    text = base64.urlsafe_b64encode(canonical.encode(body)).rstrip(b"=").decode("ascii")
    return f"{text}.{_tag(text, swarm_key)}"


def _invite(body: object) -> Invite | None:
    if not isinstance(body, dict):
        return None
    swarm_id = fields.hex_text(body.get("swarm_id"), 32)
    nonce = fields.hex_text(body.get("nonce"), NONCE_HEX)
    expires_at = fields.integer(body.get("expires_at"))
    admitter = fields.node_id(body.get("admitter"))
    key = fields.key(body.get("admitter_public_key"))
    address = fields.text(body.get("admitter_address"))
    if (
        swarm_id is None
        or nonce is None
        or expires_at is None
        or admitter is None
        or key is None
        or address is None
    ):
        return None
    return Invite(swarm_id, nonce, expires_at, admitter, key, address)


def _split(token: object) -> tuple[str, str, Invite]:
    """The token's body text, its tag and what the body says; ``malformed`` otherwise."""
    malformed = PeerRefused(code="malformed", message="the invite is not a token roost made")
    if not isinstance(token, str) or len(token) > MAX_TOKEN or token.count(".") != 1:
        raise malformed
    text, tag = token.split(".")
    if not text or not all(c.isascii() and (c.isalnum() or c in "-_") for c in text):
        raise malformed
    if fields.hex_text(tag, TAG_HEX) is None:
        raise malformed
    try:
        body = canonical.parse(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (binascii.Error, ValueError):
        raise malformed from None
    invite = _invite(body)
    if invite is None:
        raise malformed
    return text, tag, invite


def read(token: object) -> Invite:
    """What a token says, unchecked: the joiner's view, which holds no swarm key. It pins the
    admitter's key from here; everything else is the admitter's to check."""
    return _split(token)[2]


def check(
    token: object,
    swarm_id: str,
    swarm_key: bytes,
    burnt: MutableMapping[str, int],
    *,
    admitter: str,
    issued: MutableMapping[str, int],
    now: float,
    burn: bool = False,
) -> Invite:
    """The invite ``token`` carries, when this swarm made it, it names ``admitter`` (this node),
    it has not expired, its nonce is not in ``burnt`` and is one this node ``issued``;
    :class:`PeerRefused` otherwise (``malformed``, ``other_swarm``, ``forged``,
    ``not_admitter``, ``expired``, ``used``, ``not_issued``, in that order). With ``burn`` the
    nonce moves to ``burnt`` (nonce → expires_at) in the same call, for the admitter that
    admits on it."""
    text, tag, invite = _split(token)
    if not hmac.compare_digest(invite.swarm_id, swarm_id):
        raise PeerRefused(code="other_swarm", message="the invite is for another swarm")
    if not hmac.compare_digest(tag, _tag(text, swarm_key)):
        raise PeerRefused(code="forged", message="the invite's tag does not match this swarm's key")
    if invite.admitter != admitter:
        raise PeerRefused(
            code="not_admitter",
            message=f"the invite is node {invite.admitter}'s to honour: join at {invite.admitter_address}",
        )
    if now >= invite.expires_at:
        raise PeerRefused(code="expired", message="the invite has expired; ask for a new one")
    if invite.nonce in burnt:
        raise PeerRefused(code="used", message="the invite has been used; an invite admits one node")
    if invite.nonce not in issued:
        raise PeerRefused(code="not_issued", message="this node made no such invite (or has forgotten it)")
    if burn:
        burnt[invite.nonce] = invite.expires_at
        del issued[invite.nonce]
    return invite
