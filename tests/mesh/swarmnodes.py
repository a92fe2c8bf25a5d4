"""Real ``rosterd`` daemons on the nodes of :mod:`tests.nodes`, one per namespace, each with its
own HOME, XDG dirs, tmux socket and config (``[node] listen`` = the node's 100.64
address), and a test's way to act as any of them on the wire.

The daemon runs inside its node's network, PID and mount namespaces; its unix socket is a file,
so the test (outside) talks to it through the socket and runs ``rosterd`` verbs against it. The
bridge's own address (100.64.N.1) puts the test on the nodes' network too: :meth:`SwarmNode.peer`
signs requests with a node's own key and swarm key, for the refusals a stranger, a replay or
a re-targeted request must meet.
"""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from roost.remote.mesh import tls
from roost.remote.swarm import canonical, signing, state
from roost.remote.swarm.identity import Identity
from tests.conftest import BIN, _foreign
from tests.nodes import Network, Node

FAKE_MANIFEST = """name = "fake"
[acp]
command = ["fake-acp"]
transcripts = [".fake-acp/{session_id}.json"]
"""
"""A manifest for the fake ACP adapter whose history travels in a handoff (under ~/.fake-acp)."""
START_TIMEOUT = 30.0
PORT = 8791


@dataclass
class SwarmNode:
    node: Node
    root: Path
    name: str
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None
    tmux: str = ""
    """The node's tmux socket (``ROOST_SOCKET``): by default a path in the node's own directory,
    which goes with it, where a name would leave a socket behind in tmux's ``/tmp/tmux-UID``."""
    extra_env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.tmux = self.tmux or str(self.root / "tmux")

    @property
    def address(self) -> str:
        return f"{self.node.address}:{PORT}"

    @property
    def config_dir(self) -> Path:
        return self.root / "config" / "roost"

    @property
    def socket(self) -> Path:
        return self.root / "run" / "roost" / "rosterd.sock"

    @property
    def log(self) -> Path:
        return self.root / "rosterd.log"

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not _foreign(k)}
        env.update(
            HOME=str(self.root / "home"),
            XDG_CONFIG_HOME=str(self.root / "config"),
            XDG_STATE_HOME=str(self.root / "state"),
            XDG_RUNTIME_DIR=str(self.root / "run"),
            ROOST_SOCKET=self.tmux,
            PATH=os.pathsep.join((str(self.root / "bin"), str(BIN), "/usr/bin:/bin")),
            LANG="C.UTF-8",
        )
        return {**env, **self.extra_env}

    def write_config(self) -> None:
        sections: dict[str, dict[str, Any]] = {"node": {"name": self.name, "listen": self.node.address}}
        for name, values in self.settings.items():
            sections.setdefault(name, {}).update(values)
        lines = []
        for name, values in sections.items():
            lines.append(f"[{name}]")
            lines += [f"{key} = {json.dumps(value)}" for key, value in values.items()]
        self.config_dir.mkdir(parents=True, exist_ok=True)
        (self.config_dir / "rosterd.toml").write_text("\n".join(lines) + "\n")

    def start(self) -> None:
        """Start the daemon in the node and wait until its socket answers."""
        self.write_config()
        env = self.env
        with open(self.log, "ab") as log:
            self.proc = self.node.start(sys.executable, "-m", "roost.daemon", env=env, stdout=log, stderr=log)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log.read_text()
            if self.socket.exists():
                try:
                    if self.get("/status", check=False).status_code == 200:
                        return
                except httpx.TransportError:
                    pass
            time.sleep(0.05)
        raise AssertionError(f"{self.name}'s rosterd did not answer: {self.log.read_text()}")

    def stop(self) -> None:
        if self.proc is not None:
            self.node.end(self.proc)
        self.proc = None

    def get(self, path: str, check: bool = True) -> httpx.Response:
        with httpx.Client(
            transport=httpx.HTTPTransport(uds=str(self.socket)), base_url="http://rosterd"
        ) as client:
            answer = client.get(path, timeout=30)
        assert not check or answer.status_code == 200, answer.text
        return answer

    def post(self, path: str, body: Any = None, timeout: float = 60) -> httpx.Response:
        with httpx.Client(
            transport=httpx.HTTPTransport(uds=str(self.socket)), base_url="http://rosterd"
        ) as client:
            return client.post(path, json=body if body is not None else {}, timeout=timeout)

    def nodes(self) -> dict[str, Any]:
        return self.get("/swarm/nodes").json()

    def wait_for(self, predicate: Callable[[], Any], what: str, timeout: float = 15) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = predicate()
            if found:
                return found
            time.sleep(0.1)
        raise AssertionError(f"timed out: {what}")

    def hears(self, name: str, timeout: float = 20) -> None:
        """Wait until this node's union has a frame from ``name`` on a live stream: an act for a
        peer not heard yet, or whose stream was lost and not yet linked again, is refused at once
        (the peer is unreachable as far as this node knows), and a test must not race that."""

        def heard() -> bool:
            rows = self.get("/swarm/snapshot").json()["nodes"]
            return any(row["node"] == name and row["peer_state"] == "reachable" for row in rows)

        self.wait_for(heard, f"{name}'s stream heard", timeout)

    def rosterd(self, *args: str) -> subprocess.CompletedProcess[str]:
        """A ``rosterd`` verb against this node's daemon (run in the node, as a person would)."""
        return subprocess.run(
            self.node.argv(str(BIN / "rosterd"), *args),
            capture_output=True,
            text=True,
            env=self.env,
            timeout=90,
        )

    def ok(self, *args: str) -> str:
        done = self.rosterd(*args)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done.stdout

    def identity(self) -> Identity:
        document = json.loads((self.config_dir / "node.key").read_text())
        return Identity.from_seed(document["id"], bytes.fromhex(document["key"]))

    def swarm_key(self) -> bytes:
        found = state.load(self.config_dir)
        assert found is not None
        return found.swarm_key

    def listening(self) -> list[str]:
        return self.node.listeners()


class Peer:
    """The test, speaking on the wire as a node: its key signs, its certificate (or none)
    is presented, and only ``trusted`` certificates are taken from the server."""

    def __init__(self, identity: Identity | None, swarm_key: bytes, trusted: list[bytes]) -> None:
        self.identity = identity
        self.swarm_key = swarm_key
        self.context = tls.client_context(identity, trusted)

    def headers(
        self, method: str, target: str, body: bytes, now: float | None = None, *, to: str
    ) -> dict[str, str]:
        assert self.identity is not None
        when = time.time() if now is None else now
        return signing.sign(self.identity, self.swarm_key, method, target, body, to=to, now=when)

    def send(
        self, address: str, method: str, target: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> httpx.Response:
        """One request on a fresh connection; the transport error itself when the handshake fails."""
        with httpx.Client(verify=self.context, timeout=10, trust_env=False) as client:
            return client.request(method, f"https://{address}{target}", content=body, headers=headers or {})

    def hello(
        self, address: str, document: dict[str, object], now: float | None = None, *, to: str
    ) -> httpx.Response:
        body = canonical.encode(document)
        return self.send(
            address, "POST", "/swarm/hello", body, self.headers("POST", "/swarm/hello", body, now, to=to)
        )


def handshake_refused(peer: Peer, address: str) -> bool:
    """Whether a connection from ``peer`` dies in the TLS handshake (nothing reaches HTTP)."""
    try:
        peer.send(address, "GET", "/swarm/hello")
    except (httpx.TransportError, ssl.SSLError):
        return True
    return False


def make(
    network: Network, root: Path, count: int, prepare: Callable[[SwarmNode], None] | None = None
) -> list[SwarmNode]:
    """``count`` nodes on ``network``, each with a daemon started (after ``prepare`` has set its
    settings or environment, when given)."""
    made = []
    for index in range(count):
        home = root / f"n{index + 1}"
        for directory in ("home", "config", "state", "run", "bin"):
            (home / directory).mkdir(parents=True, mode=0o700)
        found = SwarmNode(network.add(), home, f"n{index + 1}")
        if prepare is not None:
            prepare(found)
        found.start()
        made.append(found)
    return made
