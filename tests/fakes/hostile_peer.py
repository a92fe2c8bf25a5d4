"""A member that turned hostile: it holds a real member's key (so the handshake and the
certificate check pass) and serves ``GET /swarm/roster`` with the events in a JSON file, then
keep-alives, to whoever dials it. Everything else is refused as a door would.

Run inside the member's namespace: ``python -m tests.fakes.hostile_peer CONFIG_DIR HOST PORT EVENTS``;
EVENTS is a JSON list of ``[event, data]`` pairs, sent as they are; the pair ``["endless",
null]`` starts a frame whose data line never ends (a flood). With ``HOSTILE_LOG`` set, the
method and path of every request that got past the handshake are appended to that file.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from roost.remote.mesh import tls
from roost.remote.swarm import state
from roost.remote.swarm.identity import Identity

EVENTS: list[tuple[str, object]] = []
"""What the stream sends first, as read from the file named on the command line."""


async def roster(_request: Request) -> StreamingResponse:
    async def frames() -> AsyncIterator[bytes]:
        for event, data in EVENTS:
            if event == "endless":
                yield b"event: frame\ndata: "
                while True:
                    yield b"x" * 65536
                    await asyncio.sleep(0)
            yield f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()
        while True:
            await asyncio.sleep(2)
            yield b": keepalive\n\n"

    return StreamingResponse(frames(), media_type="text/event-stream")


async def refuse(_request: Request) -> JSONResponse:
    return JSONResponse({"error": "refused"}, status_code=401)


class Logged:
    """Every request that reached HTTP, appended to ``HOSTILE_LOG``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and os.environ.get("HOSTILE_LOG"):
            with open(os.environ["HOSTILE_LOG"], "a") as log:
                log.write(f"{scope['method']} {scope['path']}\n")
        await self.app(scope, receive, send)


async def serve(directory: Path, host: str, port: int) -> None:
    key = json.loads((directory / "node.key").read_text())
    identity = Identity.from_seed(key["id"], bytes.fromhex(key["key"]))
    swarm = state.load(directory)
    assert swarm is not None
    certificates = [m.certificate for m in swarm.members.values() if m.certificate is not None]
    app = Starlette(
        routes=[Route("/swarm/roster", roster), Route("/{path:path}", refuse, methods=["GET", "POST"])]
    )
    config = uvicorn.Config(Logged(app), lifespan="off", log_config=None, access_log=False)
    config.load()
    config.ssl = tls.server_context(identity, certificates)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    server = uvicorn.Server(config)
    await server.serve(sockets=[sock])


if __name__ == "__main__":
    EVENTS.extend(json.loads(Path(sys.argv[4]).read_text()))
    asyncio.run(serve(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])))
