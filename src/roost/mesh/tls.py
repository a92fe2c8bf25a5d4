"""TLS between nodes: contexts made from the node key and the members' certificates, no CA.

Both ends pin at the handshake. Each trusts exactly the current members' self-signed
certificates (``cadata``), TLS 1.3 only, no hostname (a node is its key, not a name):

- the listener asks every client for a certificate and refuses one that is not a member's
  before a byte of HTTP is read. A client with no certificate gets through the handshake:
  the one thing it can do is ask to join (an invite's holder is no member yet); every other
  request must be signed by a member (:mod:`roost.mesh.listener`), so it learns nothing;
- the dialer refuses a server that is not a member (or, during a join, not the admitter whose
  key the invite names) before it sends anything.

An ``SSLContext``'s trust only grows, so a revocation is a new context. The listener's
socket keeps one context for its whole life; :class:`Trust` gives it a ``sni_callback`` that
hands each new connection the context of the membership as it is now.
"""

from __future__ import annotations

import contextlib
import os
import ssl
import tempfile
from collections.abc import Iterable

from cryptography.hazmat.primitives import serialization
from cryptography.x509 import load_der_x509_certificate

from roost.swarm.identity import Identity


def _pem(der: bytes) -> str:
    return load_der_x509_certificate(der).public_bytes(serialization.Encoding.PEM).decode("ascii")


def _present(context: ssl.SSLContext, identity: Identity) -> None:
    """Load this node's certificate and key. ``ssl`` reads them only from a file, so they pass
    through a private temporary file (0600, removed at once): the same key ``node.key`` holds."""
    key = identity.signing_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    fd, path = tempfile.mkstemp(prefix="roost-tls-", suffix=".pem")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(_pem(identity.certificate()).encode("ascii") + key)
        context.load_cert_chain(path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def _trusting(context: ssl.SSLContext, certificates: Iterable[bytes]) -> ssl.SSLContext:
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    pems = "".join(_pem(der) for der in certificates)
    if pems:
        context.load_verify_locations(cadata=pems)
    return context


def server_context(identity: Identity, certificates: Iterable[bytes]) -> ssl.SSLContext:
    """The listener's context: this node's certificate, and ``certificates`` (the members') as the
    only ones a client may present."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _present(context, identity)
    context.verify_mode = ssl.CERT_OPTIONAL
    return _trusting(context, certificates)


def client_context(identity: Identity | None, certificates: Iterable[bytes]) -> ssl.SSLContext:
    """A dialer's context: a server must present one of ``certificates``; this node presents
    its own unless ``identity`` is None (a joiner, who is no member yet)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_REQUIRED
    if identity is not None:
        _present(context, identity)
    return _trusting(context, certificates)


def unverified_context() -> ssl.SSLContext:
    """A context that reads whatever certificate a server shows, for a joiner to compare it with
    the key its invite names before it trusts it (:func:`roost.mesh.dialer.certificate_at`)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    return context


class Trust:
    """The contexts of the membership as it is now; :meth:`update` when it changes."""

    def __init__(self, identity: Identity, certificates: Iterable[bytes] = ()) -> None:
        self.identity = identity
        self.generation = 0
        self.server = server_context(identity, ())
        self.server.sni_callback = self._choose
        self._current = self.server
        self.client = client_context(identity, ())
        self.update(certificates)

    def update(self, certificates: Iterable[bytes]) -> None:
        """Trust exactly ``certificates`` from the next handshake on, either way."""
        pinned = list(certificates)
        self._current = server_context(self.identity, pinned)
        self.client = client_context(self.identity, pinned)
        self.generation += 1

    def _choose(
        self, connection: ssl.SSLObject | ssl.SSLSocket, _name: str | None, _: ssl.SSLContext
    ) -> None:
        connection.context = self._current
