"""``rosterd-holder``: one headless session's adapter, relayed unchanged, remembered, ended whole.

Each test starts the real holder (its console script, in a session of its own, as the runner
will) over a fake ACP adapter (tests/fakes/acp_adapter.py) and talks to it on its unix socket
as the daemon will: holding the daemon's lock, without which a holder serves nobody.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.conftest import BIN
from tests.signals import holds, signal_if

ADAPTER = Path(__file__).resolve().parents[1] / "fakes" / "acp_adapter.py"
HOLDER = str(BIN / "rosterd-holder")


class Peer:
    """The daemon's end of a holder's socket: JSON-RPC lines out, lines back."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(str(path))
        self.file = self.sock.makefile("rb")
        self.raw: list[bytes] = []

    def send_raw(self, line: bytes) -> None:
        self.sock.sendall(line)

    def send(self, message: dict[str, Any]) -> None:
        self.send_raw(json.dumps(message).encode() + b"\n")

    def line(self) -> dict[str, Any]:
        raw = self.file.readline()
        assert raw, "the holder closed the connection"
        self.raw.append(raw)
        return json.loads(raw)

    def until(self, request_id: object) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Read up to the answer to ``request_id``; the answer and what came before it."""
        before = []
        while True:
            message = self.line()
            if message.get("id") == request_id and "method" not in message:
                return message, before
            before.append(message)

    def call(self, request_id: object, method: str, params: Any = None) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return self.until(request_id)[0]

    def close(self) -> None:
        self.file.close()
        self.sock.close()


def prompt(peer: Peer, request_id: int, text: str) -> None:
    peer.send(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "session/prompt",
            "params": {"sessionId": "sess-fake-1", "prompt": [{"type": "text", "text": text}]},
        }
    )


@dataclass
class Held:
    root: Path
    env: dict[str, str]
    key: str = "h1"
    lock: Any = None
    """This process's hold on the daemon lock, which makes it the daemon a holder serves."""
    proc: subprocess.Popen[bytes] | None = None
    peers: list[Peer] = field(default_factory=list)

    @property
    def dir(self) -> Path:
        return self.root / "run" / "roost" / "holders"

    @property
    def socket(self) -> Path:
        return self.dir / f"{self.key}.sock"

    @property
    def state_file(self) -> Path:
        return self.dir / f"{self.key}.json"

    @property
    def log(self) -> bytes:
        path = self.root / "adapter.log"
        return path.read_bytes() if path.exists() else b""

    def tools(self) -> list[int]:
        path = self.root / "tools"
        return [int(n) for n in path.read_text().split()] if path.exists() else []

    def state(self) -> dict[str, Any]:
        return json.loads(self.state_file.read_text())

    def start(
        self, *adapter_args: str, extra: tuple[str, ...] = ()
    ) -> subprocess.CompletedProcess[bytes] | None:
        argv = [
            HOLDER,
            "--key",
            self.key,
            "--harness",
            "fake",
            "--cwd",
            str(self.root),
            "--name",
            "tests: holder",
        ]
        argv += [*extra, "--", sys.executable, str(ADAPTER), *adapter_args]
        self.proc = subprocess.Popen(
            argv, env=self.env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 10
        while not self.socket.exists():
            if self.proc.poll() is not None:
                return subprocess.CompletedProcess(argv, self.proc.returncode, b"", self.proc.stderr.read())
            assert time.monotonic() < deadline, "the holder's socket never appeared"
            time.sleep(0.02)
        return None

    def connect(self) -> Peer:
        peer = Peer(self.socket)
        self.peers.append(peer)
        return peer

    def session(self) -> Peer:
        """Connected, initialized and with its session made, as the runner does first."""
        peer = self.connect()
        assert peer.call(0, "initialize", {"protocolVersion": 1})["result"]["protocolVersion"] == 1
        answer = peer.call(1, "session/new", {"cwd": str(self.root), "mcpServers": []})["result"]
        assert answer["sessionId"] == "sess-fake-1"
        return peer

    def wait_exit(self, timeout: float) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout)


def take_daemon_lock(runtime: Path) -> Any:
    """Hold the daemon's lock in this process, as a running rosterd does."""
    (runtime / "roost").mkdir(mode=0o700, exist_ok=True)
    handle = open(runtime / "roost" / "rosterd.lock", "a+")  # noqa: SIM115 - held for the test
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return handle


@pytest.fixture
def held(tmp_path: Path) -> Iterator[Held]:
    (tmp_path / "run").mkdir(mode=0o700)
    env = {
        **os.environ,
        "XDG_RUNTIME_DIR": str(tmp_path / "run"),
        "FAKE_ACP_LOG": str(tmp_path / "adapter.log"),
        "FAKE_ACP_TOOLS": str(tmp_path / "tools"),
    }
    held = Held(tmp_path, env, lock=take_daemon_lock(tmp_path / "run"))
    yield held
    for peer in held.peers:
        peer.close()
    if held.proc is not None and held.proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(held.proc.pid, signal.SIGKILL)
        held.proc.wait(5)
    mark = b"FAKE_ACP_TOOLS=" + str(tmp_path / "tools").encode() + b"\0"
    for pid in held.tools():  # most ended with their test: a pid may name another's process now
        signal_if(pid, signal.SIGKILL, lambda pid=pid: holds(pid, mark, "environ"))
    held.lock.close()


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_the_socket_is_private_and_the_state_file_names_the_session(held: Held) -> None:
    assert held.start() is None
    assert stat.S_IMODE(held.socket.stat().st_mode) == 0o600
    assert stat.S_IMODE(held.dir.stat().st_mode) == 0o700
    before = held.state()
    assert before["session_id"] is None
    held.session()
    state = held.state()
    assert stat.S_IMODE(held.state_file.stat().st_mode) == 0o600
    assert set(state) == {
        "key", "harness", "cwd", "name", "policy", "adapter", "session_id", "holder_pid",
        "adapter_pid", "started_at", "turns", "turn_running", "socket", "ended",
    }  # fmt: skip
    assert state["session_id"] == "sess-fake-1"
    assert (state["key"], state["harness"], state["cwd"]) == ("h1", "fake", str(held.root))
    assert (state["name"], state["policy"], state["ended"]) == ("tests: holder", "attention", None)
    assert state["holder_pid"] == held.proc.pid
    assert psutil.Process(state["adapter_pid"]).ppid() == held.proc.pid
    assert psutil.Process(state["adapter_pid"]).environ()["ROSTERD_HOLDER"] == "h1"  # its mark
    assert state["adapter"][-1] == str(ADAPTER)
    assert abs(state["started_at"] - time.time()) < 30
    assert state["socket"] == str(held.socket)


def test_lines_pass_through_unchanged_both_ways(held: Held) -> None:
    held.start()
    peer = held.connect()
    odd = '{"id":7,  "jsonrpc": "2.0","method":"initialize","params":{"note":"é \\u2028 \\"q\\""}}\n'.encode()
    peer.send_raw(odd)
    answer, _ = peer.until(7)
    assert answer["result"]["protocolVersion"] == 1
    assert b"< " + odd in held.log  # what the daemon wrote is what the adapter read
    prompt_id = 8
    peer.call(1, "session/new", {"cwd": "/", "mcpServers": []})
    prompt(peer, prompt_id, "COUNT 5")
    peer.until(prompt_id)
    sent = [line[2:] for line in held.log.splitlines(keepends=True) if line.startswith(b"> ")]
    assert peer.raw == sent  # and what the adapter wrote is what the daemon read, in order


def test_a_daemon_that_comes_back_replays_the_last_256_notifications(held: Held) -> None:
    held.start()
    peer = held.session()
    asked = time.time()
    prompt(peer, 2, "COUNT 300")
    _, streamed = peer.until(2)
    assert len(streamed) == 300
    peer.close()
    again = held.connect()
    replay = again.call("r", "_roost/replay")["result"]
    *chunks, ended = replay["notifications"]
    texts = [n["params"]["update"]["content"]["text"] for n in chunks]
    assert texts == [f"chunk {n}" for n in range(46, 301)]  # the oldest gave way to the turn's marks
    at = ended["params"].pop("at")
    assert ended == {
        "jsonrpc": "2.0",
        "method": "_roost/turn_ended",
        "params": {"turn": 1, "stopReason": "end_turn", "usage": None, "error": None},
    }
    # Each kept notification with the time it passed, in order; the holder's own carry theirs.
    times = replay["times"]
    assert len(times) == 256 and times == sorted(times) and asked <= times[0] and times[-1] == at
    assert replay["pending"] == []
    assert (replay["state"]["turns"], replay["state"]["turn_running"]) == (1, False)
    assert replay["state"]["session_id"] == "sess-fake-1"
    assert b"_roost/" not in held.log  # the holder's own methods never reach the adapter


def test_a_permission_asked_while_no_daemon_listens_waits_for_the_next_one(held: Held) -> None:
    held.start()
    peer = held.session()
    prompt(peer, 3, "ASK")
    peer.close()
    time.sleep(0.3)
    again = held.connect()
    replay = again.call("r", "_roost/replay")["result"]
    pending = replay["pending"]
    assert [(p["id"], p["method"]) for p in pending] == [("perm-1", "session/request_permission")]
    [came] = replay["pending_times"]  # when it came, so a rebuilt record waits since then
    assert time.time() > came > replay["times"][0]
    assert [o["optionId"] for o in pending[0]["params"]["options"]] == ["allow", "reject"]
    assert again.line() == pending[0]  # sent again, as the adapter sent it, to be answered here
    again.send(
        {
            "jsonrpc": "2.0",
            "id": "perm-1",
            "result": {"outcome": {"outcome": "selected", "optionId": "allow"}},
        }
    )
    answered = again.line()
    assert "allow" in answered["params"]["update"]["content"]["text"]
    # The prompt's own answer went to the connection that asked, which is gone; the turn's end
    # reaches the daemon that is connected now.
    ended = again.line()
    assert ended["params"].pop("at") > came
    assert ended == {
        "jsonrpc": "2.0",
        "method": "_roost/turn_ended",
        "params": {"turn": 1, "stopReason": "end_turn", "usage": None, "error": None},
    }
    assert again.call("r2", "_roost/replay")["result"]["pending"] == []


def test_stop_cancels_then_ends_the_whole_tree_and_leaves_nothing(held: Held) -> None:
    held.start()
    peer = held.session()
    prompt(peer, 4, "TOOL")
    peer.until(4)
    [tool] = held.tools()
    adapter = held.state()["adapter_pid"]
    assert os.getpgid(tool) != os.getpgid(adapter)  # killing the adapter's group would miss it
    assert peer.call("s", "_roost/stop")["result"] == {"stopping": True}
    started = time.monotonic()
    assert held.wait_exit(10) == 0
    assert time.monotonic() - started < 6
    assert gone(adapter) and gone(tool)
    incoming = [line for line in held.log.splitlines() if line.startswith(b"< ")]
    assert json.loads(incoming[-1][2:]) == {
        "jsonrpc": "2.0",
        "method": "session/cancel",
        "params": {"sessionId": "sess-fake-1"},
    }
    assert not held.socket.exists() and not held.state_file.exists()


def test_an_adapter_that_ignores_eof_and_sigterm_is_killed_in_bounded_time(held: Held) -> None:
    held.start("--stubborn")
    held.session()
    adapter = held.state()["adapter_pid"]
    started = time.monotonic()
    held.proc.send_signal(signal.SIGTERM)
    assert held.wait_exit(15) == 0
    assert time.monotonic() - started < 7  # stdin's grace, SIGTERM's grace, and a margin
    assert gone(adapter)


def test_a_crashed_adapter_leaves_a_state_file_that_says_so_and_no_tools(held: Held) -> None:
    held.start()
    peer = held.session()
    prompt(peer, 5, "TOOL")
    peer.until(5)
    [tool] = held.tools()
    prompt(peer, 6, "CRASH")
    assert held.wait_exit(10) == 1
    assert gone(tool)
    ended = held.state()["ended"]
    assert (ended["reason"], ended["exit_code"]) == ("crash", 3)
    assert held.state()["session_id"] == "sess-fake-1"  # what a resume needs
    assert not held.socket.exists()


def test_a_second_holder_with_the_same_key_is_refused_and_the_first_keeps_going(held: Held) -> None:
    held.start()
    peer = held.session()
    argv = [HOLDER, "--key", held.key, "--harness", "fake", "--cwd", "/", "--", sys.executable, str(ADAPTER)]
    refused = subprocess.run(argv, env=held.env, capture_output=True, timeout=10)
    assert refused.returncode == 2
    assert refused.stderr == b"rosterd-holder: a holder for h1 is running already\n"
    prompt(peer, 9, "COUNT 1")
    assert peer.until(9)[0]["result"] == {"stopReason": "end_turn"}
    assert held.state()["holder_pid"] == held.proc.pid


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--key", "../x"], "rosterd-holder: --key must be 1 to 64 letters, digits, '-' or '_'\n"),
        (["--key", "k"], "rosterd-holder: no adapter command after --\n"),
        (["--key", "k", "--keep", "0", "--", "true"], "rosterd-holder: --keep must be from 1 to 100000\n"),
    ],
)
def test_bad_arguments_are_refused_and_start_nothing(held: Held, args: list[str], said: str) -> None:
    done = subprocess.run(
        [HOLDER, *args[:2], "--harness", "fake", "--cwd", "/", *args[2:]],
        env=held.env,
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert (done.returncode, done.stderr) == (2, said)
    assert not held.dir.exists() or not any(held.dir.iterdir())


CLIENT = """
import fcntl, json, socket, sys
lock = None
if sys.argv[2] == "lock":
    lock = open(sys.argv[3], "a+")
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.settimeout(10)
sock.connect(sys.argv[1])
lines = [{"jsonrpc": "2.0", "id": "s", "method": "_roost/state"}]
if sys.argv[2] == "plain":  # a stranger answers the adapter's pending permission, or tries to
    answer = {"outcome": {"outcome": "selected", "optionId": "allow"}}
    lines.insert(0, {"jsonrpc": "2.0", "id": "perm-1", "result": answer})
try:
    sock.sendall(b"".join(json.dumps(line).encode() + b"\\n" for line in lines))
    print(repr(sock.makefile("rb").readline()))
except OSError as error:
    print(type(error).__name__)
"""
CLOSED_ON = ("b''", "ConnectionResetError", "BrokenPipeError")


def client(held: Held, *how: str) -> str:
    """Connect from another process (holding the daemon lock when ``how`` says ``lock``; a
    ``plain`` one answers the pending permission first) and ask the holder's state: what it
    read back first (``b''``: closed on)."""
    done = subprocess.run(
        [sys.executable, "-c", CLIENT, str(held.socket), *how], capture_output=True, text=True, timeout=20
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_process_other_than_the_daemon_is_closed_on_and_reaches_nothing(held: Held) -> None:
    held.start()
    peer = held.session()
    prompt(peer, 3, "ASK")
    while peer.line().get("method") != "session/request_permission":
        pass
    before = held.log
    assert client(held, "plain") in CLOSED_ON
    time.sleep(0.3)
    assert held.log == before  # the stranger's answer never reached the adapter
    replay = peer.call("r", "_roost/replay")["result"]
    assert [p["id"] for p in replay["pending"]] == ["perm-1"]  # still the daemon's to answer


def test_the_lock_holder_is_the_daemon_and_nobody_else(held: Held, tmp_path: Path) -> None:
    held.start()
    held.session().close()
    held.lock.close()  # this process lets the daemon lock go: another process takes it
    said = client(held, "lock", str(tmp_path / "run" / "roost" / "rosterd.lock"))
    assert said.startswith("b'") and '"holder_pid"' in said  # a new daemon is served
    peer = Peer(held.socket)
    try:
        assert peer.file.readline() == b""  # and this process, no longer the daemon, is not
    finally:
        peer.close()


def test_a_holder_starts_without_the_roster_or_psutil() -> None:
    """A holder starts before every headless session's first turn (and every resume): what it
    imports at start is on that path. The roster and psutil are a daemon's, or the tree's later."""
    probe = "import sys, roost.headless.holder.main; print(*sorted(sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    heavy = {"psutil", "roost.truth.roster", "roost.truth.detect", "pydantic", "httpx"}
    assert not heavy & set(loaded.stdout.split())


def test_the_adapter_is_started_before_the_holder_loads_its_loop() -> None:
    """The adapter's own start is the longest step of a session's opening: the holder starts
    it before importing asyncio, so it runs beside the holder's imports."""
    probe = (
        "import sys, roost.headless.holder.main, roost.headless.holder.spawn; print('asyncio' in sys.modules)"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert loaded.stdout.split() == ["False"]


def test_a_stop_that_comes_as_the_adapter_starts_ends_it_and_exits_0(held: Held) -> None:
    """SIGTERM the moment the adapter runs (most often before the holder's loop does): the
    holder notes it, then stops as asked, ending the adapter and leaving no file behind."""
    marker = held.root / "adapter.pid"
    argv = [HOLDER, "--key", held.key, "--harness", "fake", "--cwd", str(held.root), "--"]
    argv += ["/bin/sh", "-c", f'echo $$ > "$0"; exec {sys.executable} {ADAPTER}', str(marker)]
    held.proc = subprocess.Popen(argv, env=held.env, start_new_session=True, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while not (marker.exists() and marker.read_text().strip()):
        assert time.monotonic() < deadline and held.proc.poll() is None, "the adapter never started"
        time.sleep(0.001)
    held.proc.send_signal(signal.SIGTERM)
    assert held.wait_exit(10) == 0, held.proc.stderr.read() if held.proc.stderr else b""
    assert gone(int(marker.read_text()))
    assert not held.socket.exists() and not held.state_file.exists()
