"""The holder's relay: the adapter's stdio on one side, the daemon's unix socket on the other.

ACP is JSON-RPC, one message a line. Every line goes through unchanged, in both directions;
the holder looks at each one only to keep what a daemon that connects later needs
(:mod:`roost.headless.holder.replay`) and to send an answer where it belongs:

- an answer goes only to the connection that asked for it: a daemon that restarted numbers its
  requests afresh, and must not take an answer meant for its predecessor as one to its own
  request of the same id;
- the adapter's other lines go to the connection that spoke last: a daemon that restarted
  replaces the old one by speaking, and the old connection is gone with its daemon;
- a daemon that asks for ``_roost/replay`` is sent the adapter's unanswered requests again
  after the answer, as the adapter sent them, so it can answer a permission asked before it
  connected under the adapter's own request id.

Methods under ``_roost/`` (ACP leaves ``_``-prefixed names to extensions) are the holder's
own and never reach the adapter: ``_roost/replay``, ``_roost/state`` and ``_roost/stop``.
:class:`Holder` also runs the whole holder: the adapter (:mod:`roost.headless.holder.adapter`), the
socket, and, on the way out, the end of every process below it (:mod:`roost.headless.holder.tree`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from roost.base import paths, procfs
from roost.headless.holder import statefile, tree
from roost.headless.holder.adapter import LINE_LIMIT, SIGNAL_GRACE, Adapter
from roost.headless.holder.replay import Replay, key
from roost.headless.holder.spawn import STOPS
from roost.headless.holder.statefile import Session


class Holder:
    """One adapter, kept: relayed, remembered and, at the end, ended with all it started."""

    def __init__(
        self,
        session: Session,
        socket_path: Path,
        state_path: Path,
        popen: subprocess.Popen[bytes],
        *,
        keep: int = 256,
        noted: list[int] | None = None,
    ) -> None:
        self.session = session
        self.popen = popen
        """The adapter, started before the loop (:mod:`roost.headless.holder.spawn`)."""
        self.noted = noted if noted is not None else []
        """Stopping signals that came before the loop took them over."""
        self.socket_path = socket_path
        self.state_path = state_path
        self.replay = Replay(keep, told=self._write_state)
        self.started_at = time.time()
        self._askers: dict[str, asyncio.StreamWriter] = {}  # client request id -> who asked it
        self._client: asyncio.StreamWriter | None = None
        self._stop = asyncio.Event()
        self._adapter: Adapter | None = None

    async def run(self) -> int:
        """Relay until stopped or until the adapter exits; the holder's exit status."""
        loop = asyncio.get_running_loop()
        for sig in STOPS:
            loop.add_signal_handler(sig, self._stop.set)
        loop.add_signal_handler(signal.SIGHUP, lambda: None)
        if any(sig in STOPS for sig in self.noted):
            self._stop.set()
        adapter = self._adapter = await Adapter.attach(self.popen)
        self._write_state()
        old = os.umask(0o177)
        try:
            server = await asyncio.start_unix_server(
                self._serve, path=str(self.socket_path), limit=LINE_LIMIT
            )
        finally:
            os.umask(old)
        pump = asyncio.create_task(self._pump(adapter))
        reaper = asyncio.create_task(tree.keep_reaping(frozenset({adapter.pid})))
        stopped = asyncio.create_task(self._stop.wait())
        exited = asyncio.ensure_future(adapter.exit)
        await asyncio.wait({stopped, exited}, return_when=asyncio.FIRST_COMPLETED)
        server.close()
        reaper.cancel()
        if self._stop.is_set() and not exited.done():
            await adapter.end(self.replay.session_id)
        code = await exited
        pump.cancel()
        tree.end_all(SIGNAL_GRACE)
        if self._client is not None:
            self._client.close()
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()
        if self._stop.is_set():
            with contextlib.suppress(FileNotFoundError):
                self.state_path.unlink()
            return 0
        # The adapter ended by itself: the state file stays, so the daemon can tell a crash
        # (the file says how it ended) from a reboot (the file says nothing of an end).
        self._write_state(
            ended={"at": time.time(), "exit_code": code, "reason": "exit" if code == 0 else "crash"}
        )
        return 1

    async def _pump(self, adapter: Adapter) -> None:
        """The adapter's stdout: each line remembered as need be, then passed to the daemon."""
        while line := await adapter.lines.readline():
            message = _parse(line)
            asker, after = None, None
            if isinstance(message, dict):
                if "method" not in message and "id" in message:
                    asker = self._askers.pop(key(message["id"]), None)
                after = self.replay.from_adapter(message)
            if asker is None or asker is self._client:
                await self._to_client(line if line.endswith(b"\n") else line + b"\n")
            if after is not None:
                await self._to_client(after)

    async def _to_client(self, line: bytes) -> None:
        client = self._client
        if client is None:
            return
        try:
            client.write(line)
            await client.drain()
        except (ConnectionError, RuntimeError):
            if self._client is client:
                self._client = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One daemon's connection: its lines go to the adapter, but for the holder's own.

        Only the running daemon is served: any other process is closed on before it can say a
        line, so every answer to the adapter passes through the daemon's fences and journal.
        The connection that last spoke is the one the adapter's lines go to; one that never
        speaks (a probe asking whether this holder lives) takes nothing from the daemon's."""
        if not _from_daemon(writer):
            writer.close()
            return
        adapter = self._adapter
        assert adapter is not None  # the socket opens once the adapter runs
        try:
            while line := await reader.readline():
                self._client = writer
                message = _parse(line)
                if isinstance(message, dict) and str(message.get("method", "")).startswith("_roost/"):
                    await self._answer(writer, message)
                    continue
                if isinstance(message, dict):
                    if "id" in message and message.get("method") is not None:
                        self._askers[key(message["id"])] = writer
                    self.replay.from_client(message)
                await adapter.write(line if line.endswith(b"\n") else line + b"\n")
        except (ConnectionError, asyncio.LimitOverrunError, ValueError):
            pass
        except asyncio.CancelledError:
            # The holder is ending and asyncio.run cancels what still reads; a connection's
            # task that ends cancelled is logged as an error by the server's own callback.
            pass
        finally:
            if self._client is writer:
                self._client = None
            writer.close()

    async def _answer(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        method = message["method"]
        if method == "_roost/replay":
            result: Any = self.replay.document(self.state())
        elif method == "_roost/state":
            result = self.state()
        elif method == "_roost/stop":
            result = {"stopping": True}
            self._stop.set()
        else:
            result = None
        if "id" not in message:
            return
        if result is None:
            reply: dict[str, Any] = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {"code": -32601, "message": f"the holder has no method {method}"},
            }
        else:
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        with contextlib.suppress(ConnectionError, RuntimeError):
            writer.write(json.dumps(reply).encode() + b"\n")
            if method == "_roost/replay":
                for request in list(self.replay.pending.values()):
                    writer.write(json.dumps(request).encode() + b"\n")
            await writer.drain()

    def state(self, ended: dict[str, Any] | None = None) -> dict[str, Any]:
        """What the state file holds: enough to reconnect, to resume, or to tell how it ended."""
        return statefile.document(
            self.session,
            session_id=self.replay.session_id,
            adapter_pid=self._adapter.pid if self._adapter else None,
            started_at=self.started_at,
            turns=self.replay.turns,
            turn_running=self.replay.turn_running,
            socket=self.socket_path,
            ended=ended,
        )

    def _write_state(self, ended: dict[str, Any] | None = None) -> None:
        statefile.write(self.state_path, self.state(ended))


def _from_daemon(writer: asyncio.StreamWriter) -> bool:
    """Whether the peer is the running daemon: this user's process that holds the daemon lock,
    as the kernel names both (``SO_PEERCRED`` and its lock table), never as a file says."""
    sock = writer.get_extra_info("socket")
    if sock is None:
        return False
    pid, uid = procfs.peer(sock)
    return uid == os.getuid() and pid == procfs.flock_owner(str(paths.daemon_lock()))


def _parse(line: bytes) -> object:
    try:
        return json.loads(line)
    except ValueError:
        return None
