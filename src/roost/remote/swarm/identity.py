"""A node's identity, made from the 32-byte seed in ``node.key``: its keys, fingerprint and
certificate.

- The Ed25519 key pair is the seed itself: it signs hellos, member records and requests.
- The X25519 key pair (for :mod:`roost.remote.swarm.sealing`) is derived from the seed through HKDF
  with its own ``info``. ``cryptography`` offers no Ed25519 → X25519 conversion, and doing the
  curve arithmetic by hand is what this package should not do; a derived key is also a
  separate key for a separate purpose. Its public half travels in the node's hello and member
  record, both signed by the Ed25519 key, so a peer knows it belongs to that node.
- The node id is the one ``node.key`` already stores (it is part of every session key, so it
  never changes); the ``fingerprint`` names the public key itself.
- The certificate is self-signed by the node key, for TLS between nodes, and the same bytes
  every time it is made. No CA: a peer's certificate is accepted when its key is a member's
  (:func:`pinned`).
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import secrets
from dataclasses import dataclass, field

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.x509.oid import NameOID

from roost.remote.swarm.fields import b64

SEED_BYTES = 32
X25519_INFO = b"roost swarm x25519 v1"
"""HKDF's ``info`` for the sealing key: no other derivation from the seed may use it."""
CERTIFICATE_FROM = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)
CERTIFICATE_UNTIL = datetime.datetime(2125, 1, 1, tzinfo=datetime.UTC)
"""A pinned certificate is trusted for its key, not its dates: fixed dates make it the same
bytes on every start, so a member's certificate, once published, stays the one it presents."""


def fingerprint(public_key: bytes) -> str:
    """The first 16 bytes of sha256 of a raw Ed25519 public key, hex."""
    return hashlib.sha256(public_key).digest()[:16].hex()


def verify(public_key: bytes, signature: bytes, data: bytes) -> bool:
    """Whether ``signature`` is the Ed25519 signature of ``data`` under ``public_key`` (raw)."""
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, data)
    except (InvalidSignature, ValueError):
        return False
    return True


@dataclass(frozen=True)
class Identity:
    """This node's keys; made by :meth:`from_seed`, never written anywhere but ``node.key``."""

    node_id: str
    seed: bytes = field(repr=False)
    signing_key: Ed25519PrivateKey = field(repr=False)
    exchange_key: X25519PrivateKey = field(repr=False)

    @classmethod
    def from_seed(cls, node_id: str, seed: bytes) -> Identity:
        """The identity ``node.key`` holds: its id and its 32-byte ``key``."""
        if len(seed) != SEED_BYTES:
            raise ValueError(f"a node seed is {SEED_BYTES} bytes, not {len(seed)}")
        derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=X25519_INFO).derive(seed)
        return cls(
            node_id,
            seed,
            Ed25519PrivateKey.from_private_bytes(seed),
            X25519PrivateKey.from_private_bytes(derived),
        )

    @classmethod
    def generate(cls, node_id: str) -> Identity:
        """A fresh identity, for a node's first run and for tests."""
        return cls.from_seed(node_id, secrets.token_bytes(SEED_BYTES))

    @property
    def public_key(self) -> bytes:
        """The raw 32-byte Ed25519 public key."""
        return self.signing_key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )

    @property
    def public_b64(self) -> str:
        return b64(self.public_key)

    @property
    def public_hex(self) -> str:
        return self.public_key.hex()

    @property
    def x25519_public_key(self) -> bytes:
        """The raw 32-byte X25519 public key others seal to."""
        return self.exchange_key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )

    @property
    def x25519_public_b64(self) -> str:
        return b64(self.x25519_public_key)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_key)

    def sign(self, data: bytes) -> bytes:
        """The Ed25519 signature of ``data``."""
        return self.signing_key.sign(data)

    def certificate(self) -> bytes:
        """This node's self-signed X.509 certificate (DER) for TLS between nodes; its subject
        names the node id. The same bytes on every call and every start: the dates are fixed,
        the serial comes from the key and Ed25519 signatures are deterministic, so peers can
        pin it once (it travels in the node's member record and hello)."""
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, self.node_id)])
        serial = int.from_bytes(hashlib.sha256(self.public_key).digest()[:16], "big") >> 1 | 1
        built = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self.signing_key.public_key())
            .serial_number(serial)
            .not_valid_before(CERTIFICATE_FROM)
            .not_valid_after(CERTIFICATE_UNTIL)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(self.signing_key, None)
        )
        return built.public_bytes(serialization.Encoding.DER)


def certificate_key(certificate: bytes) -> bytes | None:
    """The raw Ed25519 public key of a self-signed certificate (DER or PEM); None when it is
    not one, is not Ed25519, or its signature is not its own key's."""
    try:
        if certificate.lstrip().startswith(b"-----BEGIN"):
            cert = x509.load_pem_x509_certificate(certificate)
        else:
            cert = x509.load_der_x509_certificate(certificate)
        key = cert.public_key()
        if not isinstance(key, Ed25519PublicKey):
            return None
        cert.verify_directly_issued_by(cert)
    except (ValueError, TypeError, InvalidSignature):
        return None
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def pinned(certificate: bytes, public_key: bytes) -> bool:
    """Whether a peer's certificate carries exactly ``public_key`` (a member's, or the
    admitter's during a join). The key is the trust; there is no CA to ask."""
    key = certificate_key(certificate)
    return key is not None and hmac.compare_digest(key, public_key)
