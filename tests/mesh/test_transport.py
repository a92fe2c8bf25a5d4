"""The transport of the node's clients to peers, over real loopback TLS: a small asyncio server
made with the mesh's own contexts answers what each test asks of it, and an httpx client on
:class:`~roost.remote.mesh.transport.Transport` sees what the dialer would."""

from __future__ import annotations

import asyncio
import inspect
import socket
import ssl
import struct
from asyncio import sslproto
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import httpx
import pytest

from roost.remote.mesh import tls, transport
from roost.remote.mesh.transport import LIMITS, Transport
from roost.remote.swarm.identity import Identity

KEEPALIVE = b": keepalive\n\n"
SERVER = Identity.generate("server")
CLIENT = Identity.generate("client")


class Server:
    """A TLS listener on loopback that pins :data:`CLIENT` and answers by path:

    - ``/hello``: ``hello``, the connection kept open for more;
    - ``/sink``: reads the request's body (its ``content-length``) and answers its length;
    - ``/once``: ``once``, and the connection closed after it;
    - ``/stream``: a chunked body, one chunk for each item put in :attr:`sends`;
    - ``/silent``: headers, then nothing;
    - ``/reset``: headers and part of a body, then a TCP reset.
    """

    def __init__(self) -> None:
        self.connections = 0
        self.writers: list[asyncio.StreamWriter] = []
        self.sends: asyncio.Queue[bytes] = asyncio.Queue()
        self.port = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.writers.append(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                path = head.split(b" ", 2)[1]
                if path == b"/hello":
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello")
                elif path == b"/sink":
                    length = int(head.lower().split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0])
                    said = b"%d" % len(await reader.readexactly(length))
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(said), said))
                elif path == b"/once":
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nonce")
                    await writer.drain()
                    return
                elif path == b"/stream":
                    writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
                    while True:
                        chunk = await self.sends.get()
                        writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        await writer.drain()
                elif path == b"/silent":
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n")
                    await writer.drain()
                    await asyncio.sleep(60)
                elif path == b"/reset":
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npart")
                    await writer.drain()
                    await asyncio.sleep(0.05)
                    linger = struct.pack("ii", 1, 0)  # close with a RST, not a FIN
                    writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
                    writer.transport.abort()
                    return
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()


@asynccontextmanager
async def serving() -> AsyncIterator[Server]:
    server = Server()
    context = tls.server_context(SERVER, [CLIENT.certificate()])
    listening = await asyncio.start_server(server.handle, "127.0.0.1", 0, ssl=context)
    server.port = listening.sockets[0].getsockname()[1]
    try:
        yield server
    finally:
        listening.close()
        for writer in server.writers:
            writer.transport.abort()


def pinned(to: Identity = SERVER) -> ssl.SSLContext:
    """A dialer's context: this client's certificate, trusting ``to``'s alone."""
    return tls.client_context(CLIENT, [to.certificate()])


def client(context: ssl.SSLContext | None = None, **timeouts: float) -> httpx.AsyncClient:
    timeout = httpx.Timeout(5.0, **timeouts)
    return httpx.AsyncClient(transport=Transport(context or pinned()), timeout=timeout, trust_env=False)


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 20))


def test_a_request_is_answered_and_its_connection_kept_for_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sslproto.SSLProtocol, "max_size", sslproto.SSLProtocol.max_size)
    tls.lean_buffers()  # as the daemon does: the handshake below is asyncio's, so it applies

    async def go() -> None:
        async with serving() as server, client() as http:
            first = await http.get(f"https://127.0.0.1:{server.port}/hello")
            second = await http.get(f"https://127.0.0.1:{server.port}/hello")
            assert (first.status_code, first.content, second.content) == (200, b"hello", b"hello")
            assert server.connections == 1
            stream = second.extensions["network_stream"]
            assert isinstance(stream, transport.Stream)
            ssl_object = stream.get_extra_info("ssl_object")
            assert ssl_object.getpeercert(binary_form=True) == SERVER.certificate()
            assert stream.get_extra_info("server_addr") == ("127.0.0.1", server.port)
            assert stream.get_extra_info("is_readable") is False
            assert len(stream._transport._ssl_protocol._ssl_buffer) == tls.READ_BUFFER

    run(go)


def test_a_large_body_goes_to_tls_in_pieces_and_arrives_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """asyncio encrypts a whole write into the connection's outgoing buffer, which keeps its
    largest size for the connection's life: a body goes in writes of a piece at most."""
    writes: list[int] = []
    write = sslproto._SSLProtocolTransport.write

    def counted(self: sslproto._SSLProtocolTransport, data: bytes) -> None:
        writes.append(len(data))
        write(self, data)

    monkeypatch.setattr(sslproto._SSLProtocolTransport, "write", counted)
    body = bytes(range(256)) * 600  # 150 KiB

    async def go() -> None:
        async with serving() as server, client() as http:
            answer = await http.post(f"https://127.0.0.1:{server.port}/sink", content=body)
            assert answer.content == str(len(body)).encode()

    run(go)
    assert sum(writes) > len(body) and max(writes) == tls.WRITE_PIECE
    assert list(tls.pieces(b"small")) == [b"small"]
    assert b"".join(tls.pieces(body)) == body


def test_a_connection_the_server_closed_is_not_used_again() -> None:
    async def go() -> None:
        async with serving() as server, client() as http:
            first = await http.get(f"https://127.0.0.1:{server.port}/once")
            stream = first.extensions["network_stream"]
            for _ in range(100):
                if stream.get_extra_info("is_readable"):
                    break
                await asyncio.sleep(0.01)
            assert stream.get_extra_info("is_readable") is True  # its end, read by no one yet
            second = await http.get(f"https://127.0.0.1:{server.port}/hello")
            assert (first.content, second.content, server.connections) == (b"once", b"hello", 2)

    run(go)


def test_a_stream_hands_over_each_chunk_as_it_is_written() -> None:
    async def go() -> None:
        async with (
            serving() as server,
            client() as http,
            http.stream("GET", f"https://127.0.0.1:{server.port}/stream") as response,
        ):
            chunks = response.aiter_raw()
            for sent in (b"event: frame\ndata: {}\n\n", KEEPALIVE, KEEPALIVE):
                server.sends.put_nowait(sent)
                assert await asyncio.wait_for(anext(chunks), 2) == sent
            big = b"x" * 600_000  # more than a connection buffers before it stops reading
            server.sends.put_nowait(big)
            got = b""
            while len(got) < len(big):
                got += await asyncio.wait_for(anext(chunks), 2)
            assert got == big

    run(go)


def test_silence_past_the_read_timeout_is_a_read_timeout() -> None:
    async def go() -> None:
        async with serving() as server, client(read=0.3) as http:
            with pytest.raises(httpx.ReadTimeout):
                await http.get(f"https://127.0.0.1:{server.port}/silent")

    run(go)


def test_a_reset_in_the_middle_of_a_body_is_a_read_error() -> None:
    async def go() -> None:
        async with serving() as server, client() as http:
            with pytest.raises(httpx.ReadError):
                await http.get(f"https://127.0.0.1:{server.port}/reset")

    run(go)


def test_a_refused_connection_is_a_connect_error() -> None:
    async def go() -> None:
        closed = socket.create_server(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        closed.close()
        async with client() as http:
            with pytest.raises(httpx.ConnectError):
                await http.get(f"https://127.0.0.1:{port}/hello")

    run(go)


def test_another_certificate_than_the_one_pinned_fails_the_handshake_as_a_connect_error() -> None:
    async def go() -> None:
        async with serving() as server, client(pinned(Identity.generate("other"))) as http:
            with pytest.raises(httpx.ConnectError, match="certificate"):
                await http.get(f"https://127.0.0.1:{server.port}/hello")
            assert server.connections == 0

    run(go)


def test_the_pool_has_the_settings_httpx_would_give_it() -> None:
    context = pinned()
    ours = Transport(context)._pool
    httpx_own = httpx.AsyncHTTPTransport(verify=context, trust_env=False)._pool
    for name in ("_ssl_context", "_max_connections", "_max_keepalive_connections", "_keepalive_expiry"):
        assert getattr(ours, name) == getattr(httpx_own, name), name
    for name in ("_http1", "_http2", "_retries", "_local_address", "_uds", "_socket_options", "_proxy"):
        assert getattr(ours, name, None) == getattr(httpx_own, name, None), name
    assert inspect.signature(httpx.AsyncHTTPTransport).parameters["limits"].default == LIMITS
