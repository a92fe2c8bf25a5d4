"""The listener's connections, over real loopback sockets: a connection vouched for keeps its
place when strangers pour in, where an unvouched one is the first to go."""

from __future__ import annotations

import asyncio
import socket

from roost.remote.mesh import tls
from roost.remote.mesh.connections import SWEEP_S, Connections, Limits
from roost.remote.swarm.identity import Identity


class _Quiet(asyncio.Protocol):
    """An HTTP protocol that never answers: the test looks at the connections alone."""


async def _open(port: int) -> tuple[asyncio.StreamWriter, tuple[str, int]]:
    """A TLS connection with no certificate (as a joiner's or a client's) and the peername the
    listener knows it by."""
    _, writer = await asyncio.open_connection(
        "127.0.0.1", port, ssl=tls.unverified_context(), server_hostname=""
    )
    host, local = writer.get_extra_info("sockname")[:2]
    return writer, (host, local)


async def _settle(connections: Connections, peername: tuple[str, int]) -> None:
    for _ in range(200):
        if peername in connections.open and connections.open[peername].deadline is not None:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{peername} never finished its handshake")


def test_a_vouched_joiner_outlasts_a_crowd_of_strangers() -> None:
    async def go() -> None:
        me = Identity.generate("me")
        limits = Limits(strangers=3, stranger_per_address=64)
        connections = Connections(tls.server_context(me, []), _Quiet, lambda _der: None, limits)
        listening = socket.create_server(("127.0.0.1", 0))
        port = listening.getsockname()[1]
        await connections.serve(listening)
        writers = []
        try:
            joiner, joiner_name = await _open(port)
            bystander, bystander_name = await _open(port)
            writers += [joiner, bystander]
            await _settle(connections, joiner_name)
            await _settle(connections, bystander_name)
            connections.vouch(joiner_name, "node-joining")
            assert connections.open[joiner_name].member == "node-joining"
            for _ in range(4):
                writer, name = await _open(port)
                writers.append(writer)
                await _settle(connections, name)
            assert joiner_name in connections.open
            assert bystander_name not in connections.open
            assert connections.refused.get("strangers", 0) >= 2
            connections.vouch(joiner_name, "someone-else")  # once vouched, it stays whose it was
            assert connections.open[joiner_name].member == "node-joining"
        finally:
            for writer in writers:
                writer.close()
            await connections.close()

    asyncio.run(go())


def test_the_sweep_closes_a_connection_whose_headers_are_late_and_leaves_one_being_served() -> None:
    async def go() -> None:
        limits = Limits(header_s=0.3)
        connections = Connections(
            tls.server_context(Identity.generate("me"), []), _Quiet, lambda _: None, limits
        )
        listening = socket.create_server(("127.0.0.1", 0))
        port = listening.getsockname()[1]
        await connections.serve(listening)
        try:
            late, late_name = await _open(port)
            served, served_name = await _open(port)
            await _settle(connections, late_name)
            await _settle(connections, served_name)
            connections.begun(served_name)  # its request's headers came: no deadline while served
            await asyncio.sleep(limits.header_s + 4 * SWEEP_S)
            assert late_name not in connections.open and served_name in connections.open
            assert connections.refused == {"header_timeout": 1}
            connections.ended(served_name)  # answered: the next request's headers are due
            await asyncio.sleep(limits.header_s + 4 * SWEEP_S)
            assert served_name not in connections.open
            assert connections.refused == {"header_timeout": 2}
            late.close()
            served.close()
        finally:
            await connections.close()

    asyncio.run(go())
