"""The HTTP/1.1 protocol the daemon serves: uvicorn's h11 one, answering a request it cannot
parse (a bad ``Content-Length``, a malformed request line) with the API's JSON error shape
instead of uvicorn's plain text, so every client reads one kind of failure.

On the unix socket it also names each connection's peer: the kernel's ``SO_PEERCRED`` read
once as the connection is made, put in the scope of every request on it
(:func:`peer_process`), so a face can tell which process calls (the MCP server's caller).
"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import h11
from starlette.types import Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from roost.truth.detect.peers import peer_of
from roost.truth.roster import ProcessId

NOT_HTTP = "the request is not valid HTTP/1.1 (a bad request line, header or Content-Length)"
PEER_PROCESS = "rosterd.peer_process"
"""The scope key of the process at the other end of a unix-socket connection."""


def peer_process(scope: Scope) -> ProcessId | None:
    """The process that made the request's connection, when the kernel named one: on the unix
    socket, a process of this daemon's user that is still there; never over TCP."""
    found = scope.get(PEER_PROCESS)
    return found if isinstance(found, ProcessId) else None


class JsonErrors(H11Protocol):
    """uvicorn's h11 protocol; the answer to an unparseable request differs, and a unix-socket
    connection's requests carry their peer."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        sock: Any = transport.get_extra_info("socket")
        if sock is None or sock.family != socket.AF_UNIX:
            return
        peer = peer_of(sock)
        if isinstance(peer, ProcessId):
            app = self.app

            async def named(scope: Scope, receive: Receive, send: Send) -> None:
                await app({**scope, PEER_PROCESS: peer}, receive, send)

            self.app = named

    def send_400_response(self, msg: str) -> None:
        body = json.dumps({"error": NOT_HTTP}).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        for event in (
            h11.Response(status_code=400, headers=headers),
            h11.Data(data=body),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.close()
