"""``rosterd mcp [--socket PATH]``: rosterd's MCP server on stdin and stdout, for a harness.

A harness starts this as its ``rosterd`` MCP server (the runner and the launcher tell it to).
Each JSON-RPC line read on stdin is posted to the daemon's ``/mcp`` over its unix socket, and
each message that comes back is written to stdout as one line, so the daemon sees this process
as the caller of every tool, and its parent, the harness, names the session. Calls run side by
side (a long ``session.send`` does not hold up a ``session.list``), each on its own connection.

The daemon may restart while this runs: each call connects anew, and a call made while no
daemon answers gets a JSON-RPC error saying so, instead of ending the bridge. It ends, exit 0,
when stdin does and the calls already made are answered. Light on purpose: stdlib and roost's
own socket client, nothing of the SDK.
"""

from __future__ import annotations

import sys
import threading

from roost.base import cjson, paths
from roost.faces.cli.daemonclient import Client, Unreachable
from roost.faces.cli.rosterd.options import parse

USAGE = (("mcp [--socket PATH]", "relay MCP between stdin/stdout and the daemon (a harness runs it)"),)
PATH = "/mcp"
SERVER_ERROR = -32000
PARSE_ERROR = -32700
VERSION_HEADER = "MCP-Protocol-Version"

TYPE_CHECKING = False  # as in roost.base.paths: importing typing costs a start ~2 ms
if TYPE_CHECKING:
    from typing import IO, Any


class Bridge:
    """One harness's connection: lines in, lines out, one thread per call."""

    def __init__(self, socket_path: str, out: IO[bytes]) -> None:
        self.socket_path = socket_path
        self._out = out
        self._writing = threading.Lock()
        self.version: str | None = None
        """The protocol version ``initialize`` agreed, sent on every later request as HTTP asks."""

    def serve(self, lines: IO[bytes]) -> None:
        """Relay every line until stdin ends, then let the calls already made be answered."""
        calls = []
        for line in lines:
            if line.strip():
                call = threading.Thread(target=self.relay, args=(line.strip(),))
                call.start()
                calls.append(call)
                calls = [c for c in calls if c.is_alive()]
        for call in calls:
            call.join()

    def relay(self, line: bytes) -> None:
        try:
            message = cjson.loads(line)
        except ValueError:
            self._write({"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": "not JSON"}})
            return
        ident = message.get("id") if isinstance(message, dict) and "method" in message else None
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.version:
            headers[VERSION_HEADER] = self.version
        try:
            with Client(self.socket_path, timeout=None) as client:
                status, kind, body = client.exchange("POST", PATH, line, headers)
        except Unreachable as error:
            self._fail(ident, error.message)
            return
        if status == 202 or not body:
            return
        answers = _events(body) if kind.startswith("text/event-stream") else [body]
        for answer in answers:
            try:
                doc = cjson.loads(answer)
            except ValueError:
                self._fail(ident, f"rosterd answered {status}: {answer.decode(errors='replace')[:200]}")
                continue
            self._note_version(doc)
            self._write(doc)

    def _note_version(self, doc: Any) -> None:
        result = doc.get("result") if isinstance(doc, dict) else None
        if isinstance(result, dict) and "serverInfo" in result:
            agreed = result.get("protocolVersion")
            self.version = agreed if isinstance(agreed, str) else self.version

    def _fail(self, ident: Any, message: str) -> None:
        if ident is not None:
            self._write({"jsonrpc": "2.0", "id": ident, "error": {"code": SERVER_ERROR, "message": message}})

    def _write(self, doc: Any) -> None:
        with self._writing:
            self._out.write(cjson.dumps(doc).encode() + b"\n")
            self._out.flush()


def _events(body: bytes) -> list[bytes]:
    """The data of each server-sent event in ``body``."""
    found, data = [], []
    for line in [*body.splitlines(), b""]:
        if line.startswith(b"data:"):
            data.append(line[5:].removeprefix(b" "))
        elif not line and data:
            found.append(b"\n".join(data))
            data = []
    return found


def run(verb: str, args: list[str]) -> int:
    options = parse(args, f"usage: rosterd {verb} [--socket PATH]", valued=("--socket",))
    socket_path = options.values.get("--socket") or paths.api_socket_path()
    Bridge(socket_path, sys.stdout.buffer).serve(sys.stdin.buffer)
    return 0
