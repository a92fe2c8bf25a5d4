"""A pane of one node opened through another: ``/ws/swarm/{node}/terminal/{key}`` relays the
terminal's WebSocket over the swarm, signed like every peer request, and the owner opens the
pane as it does for a browser of its own, between real daemons in namespaces."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from websockets.asyncio.client import ClientConnection, connect, unix_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.mesh.swarmnodes import Peer, SwarmNode
from tests.mesh.unionnodes import launched, session, snapshot, swarm
from tests.nodes import Network

UNREACHABLE_WITHIN = 8.0


async def until(socket: ClientConnection, wanted: bytes, timeout: float = 15) -> bytes:
    """What the terminal shows until ``wanted`` is among it."""
    seen = b""
    async with asyncio.timeout(timeout):
        while wanted not in seen:
            message = await socket.recv()
            if isinstance(message, bytes):
                seen += message
    return seen


def opened(through: SwarmNode, path: str) -> unix_connect:
    return unix_connect(str(through.socket), f"ws://rosterd{path}", proxy=None, max_size=None)


def test_a_remote_pane_opens_through_this_node_and_keys_reach_it(network: Network, tmp_path: Path) -> None:
    a, b = swarm(network, tmp_path, 2)
    log = tmp_path / "keys.log"
    key = launched(a, tmp_path, log)["session_key"]
    assert b.post(f"/sessions/{key}/name", {"name": "far"}).status_code == 200  # named through b
    b.wait_for(lambda: any(r["session_key"] == key for r in snapshot(b)["records"]), "b's union holds it")

    async def drive() -> dict[str, Any]:
        async with opened(b, f"/ws/swarm/n1/terminal/{quote(key, safe='')}?cols=100&rows=30") as socket:
            first = json.loads(await socket.recv())
            await until(socket, b"fake agent ready")
            await socket.send(json.dumps({"type": "input", "data": "through b\r"}))
            await until(socket, b"fake reply")
            return first

    first = asyncio.run(drive())
    assert first["type"] == "reset" and first["cols"] > 0
    assert b"through b\r" in log.read_bytes()

    async def by_name() -> None:  # the node by its id, the session by its name: the owner resolves it
        async with opened(b, f"/ws/swarm/{a.identity().node_id}/terminal/far") as socket:
            await until(socket, b"fake agent ready")
            await socket.send("not json")  # the owner checks every message, as for its own browsers
            with pytest.raises(ConnectionClosed) as closed:
                await socket.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008

    asyncio.run(by_name())


def test_a_relay_is_refused_to_strangers_replays_and_keys_of_another_node(
    network: Network, tmp_path: Path
) -> None:
    a, b = swarm(network, tmp_path, 2)
    key = launched(a, tmp_path, tmp_path / "keys.log")["session_key"]
    elsewhere = session(b)
    member = Peer(b.identity(), b.swarm_key(), [a.identity().certificate(), b.identity().certificate()])

    async def attempt(path: str, headers: dict[str, str]) -> ClientConnection:
        return await connect(
            f"wss://{a.address}{path}",
            ssl=member.context,
            server_hostname="",
            additional_headers=headers,
            proxy=None,
        )

    async def check() -> None:
        path = f"/swarm/terminal/{quote(key, safe='')}"
        to_a = a.identity().node_id
        headers = member.headers("GET", path, b"", to=to_a)
        socket = await attempt(path, headers)
        await until(socket, b"fake agent ready")
        await socket.close()
        for refused in (
            headers,
            {},
            member.headers("GET", path + "?cols=1", b"", to=to_a),
            member.headers("GET", path, b"", to=b.identity().node_id),
        ):  # replay, unsigned, re-targeted at another query, signed for another node
            with pytest.raises(InvalidStatus) as said:
                await attempt(path, refused)
            assert said.value.response.status_code == 403
        other = f"/swarm/terminal/{quote(elsewhere, safe='')}"
        socket = await attempt(other, member.headers("GET", other, b"", to=to_a))
        await socket.wait_closed()
        assert socket.close_code == 1008 and (socket.close_reason or "").startswith("not_owner")

    asyncio.run(check())
    refusals = a.nodes()["refused"]
    assert sum(refusals.values()) >= 3, refusals


def test_a_remote_terminal_of_an_unreachable_or_unknown_node_closes_at_once(
    network: Network, tmp_path: Path
) -> None:
    a, b = swarm(network, tmp_path, 2)
    key = launched(a, tmp_path, tmp_path / "keys.log")["session_key"]

    async def unknown() -> dict[str, Any]:
        async with opened(b, "/ws/swarm/nowhere/terminal/x") as socket:
            said = json.loads(await socket.recv())
            await socket.wait_closed()
            assert socket.close_code == 1000
            return said

    assert asyncio.run(unknown()) == {"type": "closed", "reason": "no node 'nowhere' in this node's swarm"}
    a.node.partition()

    async def lost() -> tuple[int | None, str | None]:
        async with opened(b, f"/ws/swarm/n1/terminal/{quote(key, safe='')}") as socket:
            await socket.wait_closed()
            return socket.close_code, socket.close_reason

    began = time.monotonic()
    code, reason = asyncio.run(lost())
    assert time.monotonic() - began < UNREACHABLE_WITHIN
    assert code == 1013 and "did not answer" in (reason or ""), reason
    a.node.heal()


def test_a_relayed_terminal_ends_when_the_owner_revokes_the_node_relaying_it(
    network: Network, tmp_path: Path
) -> None:
    a, b = swarm(network, tmp_path, 2)
    key = launched(a, tmp_path, tmp_path / "keys.log")["session_key"]

    async def revoked() -> tuple[int | None, str | None]:
        async with opened(b, f"/ws/swarm/n1/terminal/{quote(key, safe='')}") as socket:
            await until(socket, b"fake agent ready")
            await asyncio.to_thread(a.ok, "revoke", b.identity().node_id)
            async with asyncio.timeout(10):
                await socket.wait_closed()
            return socket.close_code, socket.close_reason

    code, reason = asyncio.run(revoked())
    assert code == 1008 and reason == "n2 is no longer a member of this swarm", (code, reason)
