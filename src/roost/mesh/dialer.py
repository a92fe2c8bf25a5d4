"""The one way this node sends a request to another: signed, over TLS pinned to the members.

:meth:`Dialer.send` signs ``METHOD path body`` with this node's key and the swarm key and
sends it to ``host:port``, trusting only a member's certificate; a peer that does not answer,
or answers as no member, is :class:`~roost.errors.PeerUnreachable` at once: nothing is queued
or retried here. Later features (a roster stream per peer, proxied actions) send through
this class too, so every byte between nodes is signed the same way.

A join is the exception, since the joiner is no member: :func:`certificate_at` reads the
admitter's certificate, the caller compares its key with the invite's, and
:func:`join` sends the token over a connection pinned to exactly that certificate, with no
client certificate.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator

import httpx

from roost.errors import PeerUnreachable
from roost.mesh import tls
from roost.mesh.membership import Membership
from roost.swarm import canonical

UNREACHABLE = "peer_unreachable"
TIMEOUT = 5.0
"""Seconds a peer request may take; a lost peer is found out by this and nothing waits longer."""


def _split(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise PeerUnreachable(f"{address} is not host:port", code=UNREACHABLE)
    return host.strip("[]"), int(port)


def _unreachable(address: str, error: BaseException) -> PeerUnreachable:
    """A person's words for why a peer did not answer; the cause's own text where it has one."""
    reason = str(error)
    if "certificate" in reason.lower():
        reason = "its certificate is not one this node pins (it is not a member of this swarm)"
    elif isinstance(error, httpx.TimeoutException | TimeoutError):
        reason = "no answer in time"
    elif isinstance(error, httpx.ReadError | httpx.RemoteProtocolError) and not reason:
        reason = "it closed the connection without an answer (it does not take this node's certificate?)"
    reason = reason or type(error).__name__
    return PeerUnreachable(f"{address} did not answer: {reason}", code=UNREACHABLE, address=address)


class Dialer:
    """Signed requests to members, through one HTTP client per state of the membership."""

    def __init__(self, membership: Membership, trust: tls.Trust, timeout: float = TIMEOUT) -> None:
        self.membership = membership
        self.trust = trust
        self.timeout = timeout
        self._client: httpx.AsyncClient | None = None
        self._generation = -1

    async def _current(self) -> httpx.AsyncClient:
        """The client of the membership as it is now: a change of trust closes the old one."""
        if self._client is None or self._generation != self.trust.generation:
            if self._client is not None:
                await self._client.aclose()
            self._client = httpx.AsyncClient(verify=self.trust.client, timeout=self.timeout, trust_env=False)
            self._generation = self.trust.generation
        return self._client

    async def send(self, address: str, method: str, path: str, document: object = None) -> httpx.Response:
        """``method path`` at ``address``, signed, with ``document`` as its JSON body."""
        body, headers = self._signed(method, path, document)
        try:
            client = await self._current()
            return await client.request(method, f"https://{address}{path}", content=body, headers=headers)
        except (httpx.TransportError, ssl.SSLError, OSError) as error:
            raise _unreachable(address, error) from None

    @contextlib.asynccontextmanager
    async def stream(self, address: str, path: str, timeout: httpx.Timeout) -> AsyncIterator[httpx.Response]:
        """A signed ``GET path`` whose answer does not end (a peer's roster stream), on a client
        of its own: a change of membership makes a new shared client, and must not cut a
        stream the exchange ends itself when it should. Any failure to connect or read,
        ``timeout.read`` of silence included, is :class:`PeerUnreachable`."""
        headers = self.membership.sign("GET", path, b"")
        try:
            async with (
                httpx.AsyncClient(verify=self.trust.client, timeout=timeout, trust_env=False) as client,
                client.stream("GET", f"https://{address}{path}", headers=headers) as response,
            ):
                yield response
        except (httpx.TransportError, ssl.SSLError, OSError) as error:
            raise _unreachable(address, error) from None

    async def once(
        self, address: str, method: str, path: str, document: object, *, read_s: float, limit: int
    ) -> tuple[int, bytes]:
        """One request on a connection of its own, answered within ``read_s`` seconds of being
        sent (a connection within :attr:`timeout`): its status and body, at most ``limit``
        bytes. A pooled connection to a peer whose cable was pulled still looks open, and a
        request on it would wait the whole ``read_s``; a new one finds out in the connect."""
        body, headers = self._signed(method, path, document)
        timeout = httpx.Timeout(self.timeout, read=read_s)
        try:
            async with (
                httpx.AsyncClient(verify=self.trust.client, timeout=timeout, trust_env=False) as client,
                client.stream(method, f"https://{address}{path}", content=body, headers=headers) as answer,
            ):
                chunks, size = [], 0
                async for chunk in answer.aiter_bytes():
                    size += len(chunk)
                    if size > limit:
                        too_long = f"{address} answered with more than {limit} bytes"
                        raise PeerUnreachable(too_long, code=UNREACHABLE, address=address)
                    chunks.append(chunk)
                return answer.status_code, b"".join(chunks)
        except (httpx.TransportError, ssl.SSLError, OSError) as error:
            raise _unreachable(address, error) from None

    def _signed(self, method: str, path: str, document: object) -> tuple[bytes, dict[str, str]]:
        body = b"" if document is None else canonical.encode(document)
        headers = self.membership.sign(method, path, body)
        if body:
            headers["content-type"] = "application/json"
        return body, headers

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


async def certificate_at(address: str, timeout: float = TIMEOUT) -> bytes:
    """The certificate the listener at ``address`` presents (DER), not yet trusted: a joiner
    compares its key with the one its invite names before it sends a byte of the token."""
    host, port = _split(address)
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host, port, ssl=tls.unverified_context(), server_hostname=""),
            timeout,
        )
    except (OSError, ssl.SSLError, TimeoutError) as error:
        raise _unreachable(address, error) from None
    try:
        ssl_object = writer.get_extra_info("ssl_object")
        der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
    finally:
        writer.close()
        with contextlib.suppress(OSError, ssl.SSLError):
            await writer.wait_closed()
    del reader
    if not der:
        raise PeerUnreachable(f"{address} presented no certificate", code=UNREACHABLE, address=address)
    return bytes(der)


async def join(
    address: str, certificate: bytes, body: dict[str, object], timeout: float = TIMEOUT
) -> httpx.Response:
    """``POST /swarm/join`` to the admitter at ``address``, trusting exactly ``certificate``."""
    context = tls.client_context(None, [certificate])
    async with httpx.AsyncClient(verify=context, timeout=timeout, trust_env=False) as client:
        try:
            return await client.post(
                f"https://{address}/swarm/join",
                content=canonical.encode(body),
                headers={"content-type": "application/json"},
            )
        except (httpx.TransportError, ssl.SSLError, OSError) as error:
            raise _unreachable(address, error) from None
