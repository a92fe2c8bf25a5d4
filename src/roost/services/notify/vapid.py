"""The daemon's VAPID key pair (EC P-256): push services accept a push only when it is signed
by the key the browser subscribed with, so the key is made once and kept.

Kept as PEM, mode 0600, beside the config (``vapid.pem``); browsers get the public half as
the ``applicationServerKey`` (an uncompressed point, base64url without padding).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from roost.base import files

FILENAME = "vapid.pem"


@dataclass(frozen=True)
class Keys:
    private: ec.EllipticCurvePrivateKey

    @property
    def pem(self) -> bytes:
        return self.private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )

    @property
    def public_key(self) -> str:
        """The application server key a browser subscribes with."""
        point = self.private.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return base64.urlsafe_b64encode(point).rstrip(b"=").decode()


def load(directory: Path) -> Keys:
    """The keys in ``directory``, made on first use (a racing daemon's keys win)."""
    path = directory / FILENAME
    if not path.exists():
        directory.mkdir(parents=True, exist_ok=True)
        files.create(path, Keys(ec.generate_private_key(ec.SECP256R1())).pem)
    private = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(private, ec.EllipticCurvePrivateKey):
        raise ValueError(f"{path} does not hold an EC private key")
    return Keys(private)
