"""The swarm key, sealed to one joiner so only that node can open it.

The admitter makes an ephemeral X25519 key, agrees a secret with the joiner's X25519 public
key (from its signed hello), derives a key with HKDF-SHA256 (salt: both public keys, info:
``roost swarm seal v1``) and encrypts with ChaCha20-Poly1305, the joiner's node id as
associated data. The sealed text is base64url of ``ephemeral public key (32) ‖ nonce (12) ‖
ciphertext and tag``. A changed byte, another recipient or another node id all fail the tag
alike, so they are one refusal: ``unsealable``.
"""

from __future__ import annotations

import secrets

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from roost.base.errors import PeerRefused
from roost.remote.swarm.fields import KEY_BYTES, b64, unb64
from roost.remote.swarm.identity import Identity

INFO = b"roost swarm seal v1"
NONCE_BYTES = 12
TAG_BYTES = 16
MAX_SECRET = 1024


def _key(shared: bytes, ephemeral: bytes, recipient: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=ephemeral + recipient, info=INFO).derive(shared)


def seal(secret: bytes, recipient_x25519: bytes, recipient_node_id: str) -> str:
    """``secret`` sealed to the node with X25519 public key ``recipient_x25519`` and id
    ``recipient_node_id``; ``ValueError`` for a key that is not one."""
    if len(secret) > MAX_SECRET:
        raise ValueError(f"a sealed secret is at most {MAX_SECRET} bytes")
    ephemeral = X25519PrivateKey.generate()
    ephemeral_public = ephemeral.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    shared = ephemeral.exchange(X25519PublicKey.from_public_bytes(recipient_x25519))
    nonce = secrets.token_bytes(NONCE_BYTES)
    key = _key(shared, ephemeral_public, recipient_x25519)
    sealed = ChaCha20Poly1305(key).encrypt(nonce, secret, recipient_node_id.encode("utf-8"))
    return b64(ephemeral_public + nonce + sealed)


def open_sealed(sealed: object, identity: Identity) -> bytes:
    """The secret sealed to ``identity``; :class:`PeerRefused` ``malformed`` for text that is not
    a sealed secret, ``unsealable`` for one changed or sealed to another node."""
    data = unb64(sealed) if isinstance(sealed, str) and len(sealed) <= 2 * MAX_SECRET else None
    if data is None or len(data) < KEY_BYTES + NONCE_BYTES + TAG_BYTES:
        raise PeerRefused(code="malformed", message="the sealed swarm key is not one roost made")
    ephemeral, nonce, ciphertext = (
        data[:KEY_BYTES],
        data[KEY_BYTES : KEY_BYTES + NONCE_BYTES],
        data[KEY_BYTES + NONCE_BYTES :],
    )
    unsealable = PeerRefused(
        code="unsealable", message="the sealed swarm key was changed, or sealed to another node"
    )
    try:
        shared = identity.exchange_key.exchange(X25519PublicKey.from_public_bytes(ephemeral))
    except ValueError:  # a low-order point: no shared secret
        raise unsealable from None
    key = _key(shared, ephemeral, identity.x25519_public_key)
    try:
        return ChaCha20Poly1305(key).decrypt(nonce, ciphertext, identity.node_id.encode("utf-8"))
    except InvalidTag:
        raise unsealable from None
