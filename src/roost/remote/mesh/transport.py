"""The transport of every HTTP client this node opens to a peer: httpx over asyncio's own sockets.

    client = httpx.AsyncClient(transport=Transport(context), timeout=5.0, trust_env=False)

A node follows every peer's roster over a stream that is quiet but for a keep-alive every few
seconds, so most of what its event loop does at rest is read those keep-alives. httpx's own
transport reads through anyio, which resumes and pauses the socket's reading around every read
(an ``epoll_ctl`` each way) and decrypts TLS in Python over a ``MemoryBIO``; the check httpcore
makes on each pooled connection before reusing it (``is_readable``) builds anyio's attribute
dict and calls ``select()``. :class:`Backend` is the httpcore network backend made of asyncio's
own pieces instead: a protocol whose socket stays registered for reading, a buffer and one
future to wait on, ``loop.start_tls`` for TLS (asyncio's ``SSLProtocol``, whose read buffer
:func:`roost.remote.mesh.tls.lean_buffers` sizes), and ``is_readable`` answered from what the
protocol already knows (data buffered, or the peer gone) without a system call.

:class:`Transport` is ``httpx.AsyncHTTPTransport`` with its connection pool built on
:class:`Backend`. httpx takes no network backend, so the choice was between this subclass,
which replaces the one private attribute ``_pool`` with an ``httpcore.AsyncConnectionPool``
made from the same settings, and a transport of our own, which would have to copy what
``AsyncHTTPTransport`` does with each request besides (httpcore's exceptions mapped to httpx's,
on the response stream too, and the request's extensions passed through), itself private in
httpx. The subclass keeps all of that httpx's own; the pool it builds takes exactly the
arguments httpx's would for a client with no proxy (``trust_env=False``), which a test holds.

Errors are httpcore's, mapped as its anyio backend maps them: a connect or TLS handshake that
fails is ``ConnectError``, one out of time ``ConnectTimeout``; a connection reset or broken
while reading or writing is ``ReadError`` or ``WriteError``, a read or write out of time
``ReadTimeout`` or ``WriteTimeout``; the peer's end of the stream is ``b""``.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections import deque
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

from roost.remote.mesh.tls import pieces

BUFFER_LIMIT = 256 * 1024
"""Bytes a connection holds unread before it stops reading the socket (back-pressure on a peer
that sends faster than this node reads); it reads again once they are taken."""
CONNECT_DELAY_S = 0.25
"""Seconds before a connect tries the host's next address alongside the first (happy eyeballs),
as anyio's connect does."""
LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0)
"""httpx's own default limits for a client's pool."""


class _Protocol(asyncio.Protocol):
    """One connection's received bytes, kept until read, and whether it may write now."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.eof = False
        self.lost = False
        self.error: BaseException | None = None
        self.reading_paused = False
        self.waiter: asyncio.Future[None] | None = None
        self.drained: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self.lost:
            return
        self.chunks.append(data)
        self.size += len(data)
        if self.size > BUFFER_LIMIT and not self.reading_paused and self.transport is not None:
            self.reading_paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # the transport closes itself; a peer's half-close ends the connection

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.error = exc
        self._wake()
        drained, self.drained = self.drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    def pause_writing(self) -> None:
        if self.drained is None:
            self.drained = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        drained, self.drained = self.drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    def _wake(self) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def take(self, max_bytes: int) -> bytes:
        """Up to ``max_bytes`` of what is buffered (there is some)."""
        chunks = self.chunks
        first = chunks[0]
        if len(first) <= max_bytes and len(chunks) == 1:
            chunks.clear()
            data = first
        else:
            parts, size = [], 0
            while chunks and size < max_bytes:
                chunk = chunks.popleft()
                if size + len(chunk) > max_bytes:
                    chunks.appendleft(chunk[max_bytes - size :])
                    chunk = chunk[: max_bytes - size]
                parts.append(chunk)
                size += len(chunk)
            data = b"".join(parts)
        self.size -= len(data)
        if self.reading_paused and self.size <= BUFFER_LIMIT // 2 and not self.lost:
            self.reading_paused = False
            assert self.transport is not None
            self.transport.resume_reading()
        return data

    @property
    def readable(self) -> bool:
        """A read would return at once: bytes are buffered, or the peer ended or broke off."""
        return self.size > 0 or self.eof or self.lost


class Stream(httpcore.AsyncNetworkStream):
    """One connection, plain or TLS, as httpcore reads and writes it."""

    def __init__(self, transport: asyncio.Transport, protocol: _Protocol) -> None:
        self._transport = transport
        self._protocol = protocol

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        protocol = self._protocol
        while True:
            if protocol.size:
                return protocol.take(max_bytes)
            if protocol.error is not None:
                raise httpcore.ReadError(str(protocol.error) or type(protocol.error).__name__)
            if protocol.eof or protocol.lost:
                return b""
            waiter = protocol.waiter = asyncio.get_running_loop().create_future()
            try:
                if timeout is None:
                    await waiter
                else:
                    async with asyncio.timeout(timeout):
                        await waiter
            except TimeoutError:
                raise httpcore.ReadTimeout("timed out reading") from None
            finally:
                if protocol.waiter is waiter:
                    protocol.waiter = None

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        protocol = self._protocol
        if protocol.lost or self._transport.is_closing():
            raise httpcore.WriteError(str(protocol.error or "the connection is closed"))
        for piece in pieces(buffer):  # over TLS, a large write would grow its buffer for good
            self._transport.write(piece)
        drained = protocol.drained
        if drained is None:
            return
        try:
            if timeout is None:
                await asyncio.shield(drained)
            else:
                async with asyncio.timeout(timeout):
                    await asyncio.shield(drained)
        except TimeoutError:
            raise httpcore.WriteTimeout("timed out writing") from None
        if protocol.error is not None:
            raise httpcore.WriteError(str(protocol.error) or type(protocol.error).__name__)

    async def aclose(self) -> None:
        """Close at once: a TLS connection sends its ``close_notify`` and is not kept waiting for
        the peer's (anyio's httpcore backend sends none), and a plain one goes with what it had
        still to send, as anyio's does."""
        self._transport.close()
        self._transport.abort()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport = await loop.start_tls(
                    self._transport, self._protocol, ssl_context, server_hostname=server_hostname
                )
        except TimeoutError:
            self._transport.abort()
            raise httpcore.ConnectTimeout("timed out in the TLS handshake") from None
        except (ssl.SSLError, OSError) as error:
            self._transport.abort()
            raise httpcore.ConnectError(str(error) or type(error).__name__) from error
        except BaseException:
            self._transport.abort()
            raise
        if transport is None:  # the connection was lost in the handshake
            raise httpcore.ConnectError("the connection closed in the TLS handshake")
        self._protocol.transport = transport  # type: ignore[assignment]
        return Stream(transport, self._protocol)  # type: ignore[arg-type]

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            return self._protocol.readable
        if info == "ssl_object":
            return self._transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        if info == "socket":
            return self._transport.get_extra_info("socket")
        return None


async def _connected(
    opening: Any, timeout: float | None, socket_options: Iterable[httpcore.SOCKET_OPTION] | None
) -> Stream:
    """The stream of the connection ``opening`` (a coroutine of the loop's) makes."""
    try:
        async with asyncio.timeout(timeout):
            transport, protocol = await opening
    except TimeoutError:
        raise httpcore.ConnectTimeout("timed out connecting") from None
    except OSError as error:
        raise httpcore.ConnectError(str(error) or type(error).__name__) from error
    raw: socket.socket | None = transport.get_extra_info("socket")
    if raw is not None:
        for option in socket_options or ():
            raw.setsockopt(*option)  # type: ignore[call-overload]
    return Stream(transport, protocol)


class Backend(httpcore.AsyncNetworkBackend):
    """httpcore's connections made with asyncio's own transports and protocols: TCP alone, as
    every peer is reached (a pool given no ``uds`` never asks for a unix socket)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        opening = loop.create_connection(
            _Protocol,
            host,
            port,
            local_addr=(local_address, 0) if local_address else None,
            happy_eyeballs_delay=CONNECT_DELAY_S,
        )
        return await _connected(opening, timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class Transport(httpx.AsyncHTTPTransport):
    """httpx's HTTP/1.1 transport, its pool's connections made by :class:`Backend`; ``verify``
    is the pinned context (or anything httpx takes), and no proxy or environment applies."""

    def __init__(self, verify: ssl.SSLContext | bool = True, limits: httpx.Limits = LIMITS) -> None:
        super().__init__(verify=verify, trust_env=False, limits=limits)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify, trust_env=False),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=Backend(),
        )
