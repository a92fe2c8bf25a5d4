"""A Web Push service stub on loopback: checks the VAPID signature and decrypts the payload.

It answers every push with ``status`` (201 by default; 410 plays a dropped subscription) and
keeps what it could read of each push in ``pushes``: the JWT claims and the plaintext.
"""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import http_ece
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def verify_vapid(header: str, public_key: str) -> dict[str, Any]:
    """The claims of ``Authorization: vapid t=JWT, k=KEY``, after checking the ES256 signature
    against ``public_key`` (and that ``k`` is that key)."""
    scheme, _, params = header.partition(" ")
    assert scheme == "vapid", header
    fields = dict(part.strip().split("=", 1) for part in params.split(","))
    assert fields["k"] == public_key
    head, body, signature = fields["t"].split(".")
    assert json.loads(unb64(head))["alg"] == "ES256"
    raw = unb64(signature)
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64(public_key))
    key.verify(der, f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))
    claims: dict[str, Any] = json.loads(unb64(body))
    return claims


class PushService:
    """One subscriber's push service: its endpoint and the browser-side keys to decrypt with."""

    def __init__(self, vapid_public_key: str, host: str = "127.0.0.1") -> None:
        """``host``: where it listens (a node in a namespace of its own reaches the test at the
        bridge's address, a tailnet one)."""
        self.vapid_public_key = vapid_public_key
        self.host = host
        self.private = ec.generate_private_key(ec.SECP256R1())
        self.auth = b"0123456789abcdef"
        self.status = 201
        self.pushes: list[dict[str, Any]] = []
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                claims = verify_vapid(self.headers["Authorization"], service.vapid_public_key)
                assert self.headers["Content-Encoding"] == "aes128gcm"
                plain = http_ece.decrypt(body, private_key=service.private, auth_secret=service.auth)
                service.pushes.append({"claims": claims, "payload": json.loads(plain), "path": self.path})
                self.send_response(service.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.server.server_address[1]}"

    def subscription(self, name: str = "sub") -> dict[str, Any]:
        """What a browser's ``PushSubscription.toJSON()`` would give for this service."""
        point = self.private.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {
            "endpoint": f"{self.origin}/push/{name}",
            "keys": {"p256dh": b64(point), "auth": b64(self.auth)},
        }

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
