"""The door, in process, as the listener's connections would show it: a client that presented
a certificate at the TLS handshake (the ASGI TLS extension), or none."""

from __future__ import annotations

import ssl

from starlette.types import ASGIApp, Receive, Scope, Send


def presenting(app: ASGIApp, certificate: bytes | None) -> ASGIApp:
    """``app`` as reached by a client that presented ``certificate`` (DER), or no certificate."""
    chain = [ssl.DER_cert_to_PEM_cert(certificate)] if certificate is not None else []

    async def shown(scope: Scope, receive: Receive, send: Send) -> None:
        extensions = dict(scope.get("extensions") or {})
        extensions["tls"] = {"client_cert_chain": chain}
        await app({**scope, "extensions": extensions}, receive, send)

    return shown
