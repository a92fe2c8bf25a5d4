"""TLS between nodes: contexts made from the node key and the members' certificates, no CA.

Both ends pin at the handshake, TLS 1.3 only, no hostname (a node is its key, not a name):

- the listener asks every client for a certificate and refuses one that no node of the swarm
  has (``cadata``: every known node's, a revoked one's too, so that its door can tell a revoked
  node so) before a byte of HTTP is read. A client with no certificate gets through the
  handshake: the one thing it can do is ask to join (an invite's holder is no member yet);
  the door (:mod:`roost.remote.mesh.listener`) knows from the certificate which node is talking
  before it reads a header, and lets no other through;
- the dialer trusts exactly the certificate of the member it means to reach
  (:meth:`Trust.client_for`), as SSH trusts a host's key for that host only: another member's
  certificate at that address is refused before anything is sent. Only discovery, which does
  not yet know who answers at an address, trusts any current member (:attr:`Trust.client`),
  and it sends nothing over that handshake.

An ``SSLContext``'s trust only grows, so a revocation is a new context. The listener's
socket keeps one context for its whole life; :class:`Trust` gives it a ``sni_callback`` that
hands each new connection the context of the membership as it is now. An admission only adds
trust, so it adds the newcomer's certificate to the contexts in use rather than make them
again: OpenSSL takes ~0.1 ms a certificate to load, so at a thousand members a new context is
~100 ms where one more certificate is well under 1 ms.
"""

from __future__ import annotations

import contextlib
import os
import ssl
import tempfile
from collections.abc import Iterable, Iterator, Mapping

from cryptography.hazmat.primitives import serialization
from cryptography.x509 import load_der_x509_certificate

from roost.remote.swarm.identity import Identity

READ_BUFFER = 4 * 1024
"""Bytes of the buffer asyncio reads each TLS connection's ciphertext into, where asyncio's own
is 256 KiB. Each read is copied whole into the connection's incoming memory buffer, which keeps
the largest size it grew to for the connection's life, so this bounds that buffer too. A
stream at rest reads keep-alives of a few dozen bytes and a change of a kilobyte or two; a
frame of fifty kilobytes takes a dozen reads."""
WRITE_PIECE = 4 * 1024
"""Bytes written to a TLS connection at once. asyncio encrypts whatever one write hands it into
the connection's outgoing memory buffer before sending any of it, and that buffer too keeps
its largest size: a stream's first frame (a peer's fifty sessions, ~50 KB) written whole held
that much on every served stream for good.

Measured over loopback (300 connections, each sent one 100 KB frame, both ends in one process):
a connection held 277 KiB with asyncio's buffers of 32 KiB and the frame written whole, 142
KiB with 16 KiB reads and pieces, 88 KiB with 4 KiB (78 KiB before any frame). A piece is a
TLS record of its own (22 bytes more on the wire, 0.5 %)."""


def lean_buffers() -> None:
    """Give every TLS connection of this process a :data:`READ_BUFFER` read buffer. asyncio
    allocates (and zero-fills, so it is resident) 256 KiB a connection, and a node holds two a
    peer at rest (a roster stream each way): measured with 100 simulated peers
    (``bench/swarm_scale.py``), ~1 MiB of RSS a peer, most of it these buffers."""
    from asyncio import sslproto

    sslproto.SSLProtocol.max_size = READ_BUFFER


def pieces(data: bytes) -> Iterator[bytes]:
    """``data`` in writes of at most :data:`WRITE_PIECE` bytes (itself, when it is no longer)."""
    if len(data) <= WRITE_PIECE:
        yield data
        return
    for start in range(0, len(data), WRITE_PIECE):
        yield data[start : start + WRITE_PIECE]


def _pem(der: bytes) -> str:
    return load_der_x509_certificate(der).public_bytes(serialization.Encoding.PEM).decode("ascii")


def _trust_more(context: ssl.SSLContext, certificates: Iterable[bytes]) -> None:
    """Add ``certificates`` (DER) to what ``context`` trusts."""
    ders = b"".join(certificates)
    if ders:
        context.load_verify_locations(cadata=ders)


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
    _trust_more(context, certificates)
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
    the key its invite names before it trusts it (:func:`roost.remote.mesh.dialer.certificate_at`)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    return context


class Trust:
    """The contexts of the membership as it is now; :meth:`update` when it changes."""

    def __init__(
        self, identity: Identity, members: Mapping[str, bytes] | None = None, known: Iterable[bytes] = ()
    ) -> None:
        self.identity = identity
        self.generation = 0
        self.server = server_context(identity, ())
        self.server.sni_callback = self._choose
        self._current = server_context(identity, ())  # grows in place: never the listener's own
        self.client = client_context(identity, ())
        self._members: dict[str, bytes] = {}
        self._known: set[bytes] = set()
        self._clients: dict[str, ssl.SSLContext] = {}
        self.update(members or {}, known)

    def update(self, members: Mapping[str, bytes], known: Iterable[bytes]) -> None:
        """From the next handshake on: take a client certificate of any ``known`` node (the
        door decides what it may do) and dial each of ``members`` (node id → certificate)
        trusting that member's certificate alone."""
        # a member whose certificate did not change keeps its context: a change of membership
        # costs one new context per new or changed member, not one per member
        kept = {
            node: self._clients[node]
            for node, der in members.items()
            if self._members.get(node) == der and node in self._clients
        }
        known = set(known)
        if known >= self._known:
            _trust_more(self._current, known - self._known)
        else:
            self._current = server_context(self.identity, known)
        trusted, wanted = set(self._members.values()), set(members.values())
        if wanted >= trusted:
            _trust_more(self.client, wanted - trusted)
        else:
            self.client = client_context(self.identity, wanted)
        self._known, self._members, self._clients = known, dict(members), kept
        self.generation += 1

    def client_for(self, node_id: str) -> ssl.SSLContext | None:
        """A context that trusts member ``node_id``'s certificate and no other; None when it is
        no current member (or carries no certificate)."""
        found = self._clients.get(node_id)
        if found is None and node_id in self._members:
            found = self._clients[node_id] = client_context(self.identity, [self._members[node_id]])
        return found

    def _choose(
        self, connection: ssl.SSLObject | ssl.SSLSocket, _name: str | None, _: ssl.SSLContext
    ) -> None:
        connection.context = self._current
