"""The holder's relay: the adapter's stdio on one side, the daemon's unix socket on the other.

ACP is JSON-RPC, one message a line. Every line goes through unchanged, in both directions;
the holder only looks at each one to keep what a daemon that connects later needs:

- the last ``keep`` notifications from the adapter (a daemon that restarted mid-turn replays
  them to rebuild the session's state), each with the time it passed (the replay's ``times``),
  so a rebuilt record says when the session last did something, not when the daemon came back;
- the adapter's requests nobody has answered yet (a permission asked while no daemon was
  connected is still waiting for its answer), each with when it came (``pending_times``);
- the session id, from the answer to ``session/new`` (or the id ``session/load`` names);
- where each turn stands. A turn's end is the answer to its ``session/prompt``, and that
  answer goes to the connection that asked: a daemon that restarted mid-turn would never see
  it. So the holder notes ``_roost/turn_started`` in the replay buffer when a prompt passes,
  and sends (and keeps) ``_roost/turn_ended`` with the stop reason, the usage or the error
  when its answer does, to whichever daemon is connected then. Both carry ``at``, the time
  they were noted, so a turn's end reads the same time live and after a restart.

A daemon that asks for ``_roost/replay`` is sent the adapter's unanswered requests again
after the answer, as the adapter sent them, so it can answer a permission asked before it
connected under the adapter's own request id.

Methods under ``_roost/`` (ACP leaves ``_``-prefixed names to extensions) are the holder's
own and never reach the adapter: ``_roost/replay``, ``_roost/state`` and ``_roost/stop``.
The adapter's lines go to the connection that spoke last: a daemon that restarted replaces
the old one by speaking, and the old connection is gone with its daemon.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roost import files, paths
from roost.detect import procs
from roost.holder import tree

LINE_LIMIT = paths.HOLDER_LINE_LIMIT
CANCEL_PAUSE = 0.2
"""After ``session/cancel``, how long the adapter gets to end its turn before its stdin closes."""
STDIN_GRACE = 3.0
"""After its stdin closes, how long the adapter gets to exit by itself (codex-acp takes 2 s)."""
SIGNAL_GRACE = 2.0
"""After SIGTERM, how long any process of the tree gets before SIGKILL."""
REAP_EVERY = 2.0
"""How often orphaned tools that exited are collected while the session runs."""


@dataclass
class Session:
    """What the holder was started with, as its state file says it."""

    key: str
    harness: str
    cwd: str
    argv: list[str]
    name: str | None = None
    policy: str = "attention"
    env: dict[str, str] = field(default_factory=dict)
    stderr: str | None = None
    """Where the adapter's standard error goes (it says why it would not start); else nowhere."""


class Holder:
    """One adapter, kept: relayed, remembered and, at the end, ended with all it started."""

    def __init__(self, session: Session, socket_path: Path, state_path: Path, keep: int = 256) -> None:
        self.session = session
        self.socket_path = socket_path
        self.state_path = state_path
        self.notifications: deque[tuple[float, Any]] = deque(maxlen=keep)
        """The last notifications, each with when it passed (epoch seconds)."""
        self.pending: dict[str, Any] = {}
        self._pending_at: dict[str, float] = {}
        """When each of ``pending`` came from the adapter."""
        self.session_id: str | None = None
        self.started_at = time.time()
        self._asked: dict[str, str] = {}  # client request id -> method, for session/new and load
        self._prompts: dict[str, int] = {}  # client request id of a running prompt -> its turn
        self._askers: dict[str, asyncio.StreamWriter] = {}  # client request id -> who asked it
        self.turns = 0
        self._ended_lines: list[bytes] = []
        self._client: asyncio.StreamWriter | None = None
        self._stop = asyncio.Event()
        self._adapter: subprocess.Popen[bytes] | None = None
        self._from_adapter: asyncio.StreamReader
        self._to: asyncio.StreamWriter
        self._exit: asyncio.Future[int]

    async def run(self) -> int:
        """Relay until stopped or until the adapter exits; the holder's exit status."""
        tree.become_subreaper()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._stop.set)
        loop.add_signal_handler(signal.SIGHUP, lambda: None)
        errors = subprocess.DEVNULL
        if self.session.stderr:
            errors = os.open(
                self.session.stderr, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600
            )
        try:
            self._adapter = subprocess.Popen(
                self.session.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                cwd=self.session.cwd,
                env={**os.environ, **self.session.env, paths.HOLDER_MARK_ENV: self.session.key},
            )
        finally:
            if errors != subprocess.DEVNULL:
                os.close(errors)
        assert self._adapter.stdin is not None and self._adapter.stdout is not None
        self._from_adapter = asyncio.StreamReader(limit=LINE_LIMIT)
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(self._from_adapter), self._adapter.stdout
        )
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, self._adapter.stdin
        )
        self._to = asyncio.StreamWriter(transport, protocol, None, loop)
        self._exit = _exit_of(self._adapter)
        self._write_state()
        old = os.umask(0o177)
        try:
            server = await asyncio.start_unix_server(
                self._serve, path=str(self.socket_path), limit=LINE_LIMIT
            )
        finally:
            os.umask(old)
        pump = asyncio.create_task(self._pump())
        reaper = asyncio.create_task(self._reap())
        stopped = asyncio.create_task(self._stop.wait())
        exited = asyncio.ensure_future(self._exit)
        await asyncio.wait({stopped, exited}, return_when=asyncio.FIRST_COMPLETED)
        server.close()
        reaper.cancel()
        if self._stop.is_set() and not exited.done():
            await self._end_adapter()
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

    async def _end_adapter(self) -> None:
        """``session/cancel``, then EOF on stdin, then signals: each bounded in time."""
        adapter = self._adapter
        assert adapter is not None
        with contextlib.suppress(ConnectionError, RuntimeError):
            if self.session_id is not None:
                cancel = {
                    "jsonrpc": "2.0",
                    "method": "session/cancel",
                    "params": {"sessionId": self.session_id},
                }
                self._to.write(json.dumps(cancel).encode() + b"\n")
                await self._to.drain()
                await asyncio.sleep(CANCEL_PAUSE)
            self._to.close()
        for step, grace in (
            (lambda: None, STDIN_GRACE),
            (adapter.terminate, SIGNAL_GRACE),
            (adapter.kill, SIGNAL_GRACE),
        ):
            with contextlib.suppress(ProcessLookupError):
                step()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._exit), grace)
                return

    async def _pump(self) -> None:
        """The adapter's stdout: each line remembered as need be, then passed to the daemon."""
        while line := await self._from_adapter.readline():
            message = _parse(line)
            asker = self._note_from_adapter(message) if isinstance(message, dict) else None
            if asker is None or asker is self._client:
                await self._to_client(line if line.endswith(b"\n") else line + b"\n")
            while self._ended_lines:
                await self._to_client(self._ended_lines.pop(0))

    def _note_from_adapter(self, message: dict[str, Any]) -> asyncio.StreamWriter | None:
        """Remember what a later daemon needs; for an answer, the connection that asked.

        An answer goes only to the connection that asked for it: a daemon that restarted
        numbers its requests afresh, and must not take an answer meant for its predecessor
        as one to its own request of the same id."""
        if "method" in message:
            if "id" in message:
                self.pending[_key(message["id"])] = message
                self._pending_at[_key(message["id"])] = time.time()
            else:
                self.notifications.append((time.time(), message))
            return None
        if "id" not in message:
            return None
        asker = self._askers.pop(_key(message["id"]), None)
        turn = self._prompts.pop(_key(message["id"]), None)
        if turn is not None:
            self._turn_ended(turn, message)
        method = self._asked.pop(_key(message["id"]), None)
        result = message.get("result")
        if method == "session/new" and isinstance(result, dict) and isinstance(result.get("sessionId"), str):
            self.session_id = result["sessionId"]
            self._write_state()
        return asker

    def _turn_ended(self, turn: int, answer: dict[str, Any]) -> None:
        result = answer.get("result")
        result = result if isinstance(result, dict) else {}
        params = {
            "turn": turn,
            "stopReason": result.get("stopReason"),
            "usage": result.get("usage"),
            "error": answer.get("error"),
        }
        self._ended_lines.append(self._note("_roost/turn_ended", params))

    def _note(self, method: str, params: dict[str, Any]) -> bytes:
        """A notification of the holder's own, stamped ``at`` and kept for replay like the
        adapter's."""
        at = time.time()
        message = {"jsonrpc": "2.0", "method": method, "params": {**params, "at": at}}
        self.notifications.append((at, message))
        return json.dumps(message).encode() + b"\n"

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
        try:
            while line := await reader.readline():
                self._client = writer
                message = _parse(line)
                if isinstance(message, dict) and str(message.get("method", "")).startswith("_roost/"):
                    await self._answer(writer, message)
                    continue
                if isinstance(message, dict):
                    self._note_from_client(message, writer)
                await self._to_adapter(line if line.endswith(b"\n") else line + b"\n")
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

    def _note_from_client(self, message: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        method = message.get("method")
        if "id" in message and method is not None:
            self._askers[_key(message["id"])] = writer
        if "id" in message and method == "session/prompt":
            self.turns += 1
            self._prompts[_key(message["id"])] = self.turns
            self._note("_roost/turn_started", {"turn": self.turns})
        elif "id" in message and method in ("session/new", "session/load"):
            self._asked[_key(message["id"])] = method
            params = message.get("params")
            if (
                method == "session/load"
                and isinstance(params, dict)
                and isinstance(params.get("sessionId"), str)
            ):
                self.session_id = params["sessionId"]
                self._write_state()
        elif method is None and "id" in message:
            self.pending.pop(_key(message["id"]), None)  # the answer to one of the adapter's requests
            self._pending_at.pop(_key(message["id"]), None)

    async def _to_adapter(self, line: bytes) -> None:
        if self._to.is_closing():
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            self._to.write(line)
            await self._to.drain()

    async def _answer(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        method = message["method"]
        if method == "_roost/replay":
            result: Any = {
                "notifications": [message for _, message in self.notifications],
                "times": [at for at, _ in self.notifications],
                "pending": list(self.pending.values()),
                "pending_times": [self._pending_at[key] for key in self.pending],
                "state": self.state(),
            }
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
                for request in list(self.pending.values()):
                    writer.write(json.dumps(request).encode() + b"\n")
            await writer.drain()

    async def _reap(self) -> None:
        assert self._adapter is not None
        skip = frozenset({self._adapter.pid})
        while True:
            await asyncio.sleep(REAP_EVERY)
            tree.reap(skip)

    def state(self, ended: dict[str, Any] | None = None) -> dict[str, Any]:
        """What the state file holds: enough to reconnect, to resume, or to tell how it ended."""
        s = self.session
        return {
            "key": s.key,
            "harness": s.harness,
            "cwd": s.cwd,
            "name": s.name,
            "policy": s.policy,
            "adapter": s.argv,
            "session_id": self.session_id,
            "holder_pid": os.getpid(),
            "adapter_pid": self._adapter.pid if self._adapter else None,
            "started_at": self.started_at,
            "turns": self.turns,
            "turn_running": bool(self._prompts),
            "socket": str(self.socket_path),
            "ended": ended,
        }

    def _write_state(self, ended: dict[str, Any] | None = None) -> None:
        files.replace(self.state_path, json.dumps(self.state(ended), indent=1) + "\n")


def _exit_of(proc: subprocess.Popen[bytes]) -> asyncio.Future[int]:
    """The adapter's exit status, as soon as it exits.

    Not asyncio's subprocess wait: that also waits for the adapter's pipes to close, and a tool
    the adapter started keeps them open after it is gone. A pidfd turns readable on the exit
    itself."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[int] = loop.create_future()
    pidfd = os.pidfd_open(proc.pid)

    def exited() -> None:
        loop.remove_reader(pidfd)
        os.close(pidfd)
        done.set_result(proc.wait())

    loop.add_reader(pidfd, exited)
    return done


def _from_daemon(writer: asyncio.StreamWriter) -> bool:
    """Whether the peer is the running daemon: this user's process that holds the daemon lock,
    as the kernel names both (``SO_PEERCRED`` and its lock table), never as a file says."""
    sock = writer.get_extra_info("socket")
    if sock is None:
        return False
    pid, uid = procs.peer(sock)
    return uid == os.getuid() and pid == procs.flock_owner(str(paths.daemon_lock()))


def _parse(line: bytes) -> object:
    try:
        return json.loads(line)
    except ValueError:
        return None


def _key(request_id: object) -> str:
    """A JSON-RPC id as a dict key: ``1`` and ``"1"`` are different ids."""
    return json.dumps(request_id)
