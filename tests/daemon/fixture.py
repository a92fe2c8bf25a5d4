"""A real ``rosterd`` daemon per test: its own config, secrets, runtime dir and loopback port.

The daemon runs as a separate process (``python -m roost.daemon``) inside the test's roost
sandbox, so it rebuilds from the sandbox's tmux server. Tests talk to it over real HTTP with
httpx, through the unix socket and through TCP on 127.0.0.1.
"""

from __future__ import annotations

import json
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Roost

START_TIMEOUT = 20.0


EPHEMERAL = "/proc/sys/net/ipv4/ip_local_port_range"


def free_port() -> int:
    """A loopback port for a daemon to listen on, that no one listens on now: chosen at random
    below the kernel's ephemeral range, so no connection going out (the suite makes thousands)
    takes it as its local port before the daemon binds it. Another worker's pick may still
    collide; at random among ~20,000 ports, seldom."""
    with open(EPHEMERAL) as ranges:
        low = int(ranges.read().split()[0])
    while True:
        port = random.randrange(10_000, max(low, 20_000))
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("127.0.0.1", port))
                probe.listen()
            except OSError:
                continue
            return port


@dataclass
class Daemon:
    """One daemon's files and process; ``start`` and ``stop`` may be called again (restarts)."""

    roost: Roost
    runtime: Path
    port: int
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None
    hook_port: int = field(default_factory=free_port)
    """Where its agents' HTTP hooks post (``[node] hook_port``)."""
    starts: int = 0

    @property
    def env(self) -> dict[str, str]:
        return {**self.roost.env, "XDG_RUNTIME_DIR": str(self.runtime)}

    @property
    def config_dir(self) -> Path:
        return self.roost.root / "config" / "roost"

    @property
    def config(self) -> Path:
        return self.config_dir / "rosterd.toml"

    @property
    def socket(self) -> Path:
        return self.runtime / "roost" / "rosterd.sock"

    @property
    def token(self) -> str:
        return (self.config_dir / "loopback.token").read_text().strip()

    @property
    def log(self) -> Path:
        return self.roost.root / f"rosterd.{self.starts}.log"

    def write_config(self) -> None:
        sections = {
            "node": {"loopback_port": self.port, "hook_port": self.hook_port},
            "sources": {"scan_interval_ms": 200},
        }
        for name, values in self.settings.items():
            sections.setdefault(name, {}).update(values)
        lines = []
        for name, values in sections.items():
            lines.append(f"[{name}]")
            lines += [f"{key} = {json.dumps(value)}" for key, value in values.items()]
        self.config_dir.mkdir(parents=True, exist_ok=True)
        self.config.write_text("\n".join(lines) + "\n")

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "roost.daemon", *args]

    def spawn(self, *args: str) -> subprocess.Popen[bytes]:
        """Start a daemon process without waiting for it (the caller decides what to expect)."""
        self.starts += 1
        with open(self.log, "wb") as log:
            return subprocess.Popen(self.command(*args), env=self.env, stdout=log, stderr=log)

    def start(self) -> float:
        """Start the daemon and wait until its unix socket answers; returns how long that took."""
        self.write_config()
        began = time.monotonic()
        self.proc = self.spawn()
        self.wait_ready()
        return time.monotonic() - began

    def wait_ready(self) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"rosterd exited {self.proc.returncode}: {self.log.read_text()}")
            if self.socket.exists():
                try:
                    with self.unix() as client:
                        if client.get("/status").status_code == 200:
                            return
                except httpx.TransportError:
                    pass
            time.sleep(0.02)
        raise AssertionError(f"rosterd did not answer within {START_TIMEOUT}s: {self.log.read_text()}")

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 20) -> int:
        assert self.proc is not None
        self.proc.send_signal(signum)
        code = self.proc.wait(timeout)
        self.proc = None
        return code

    def unix(self, timeout: float = 10) -> httpx.Client:
        transport = httpx.HTTPTransport(uds=str(self.socket))
        return httpx.Client(transport=transport, base_url="http://rosterd", timeout=timeout)

    def tcp(self, token: str | None = None, timeout: float = 10) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=f"http://127.0.0.1:{self.port}", headers=headers, timeout=timeout)

    def get(self, path: str) -> Any:
        with self.unix() as client:
            response = client.get(path)
        assert response.status_code == 200, response.text
        return response.json()

    def snapshot(self) -> dict[str, Any]:
        return self.get("/snapshot")

    def wait_for(self, predicate: Callable[[], Any], timeout: float = 10, what: str = "") -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.02)
        raise AssertionError(f"timed out waiting for {what or predicate}")

    def record_where(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
        return next((r for r in self.snapshot()["records"] if predicate(r)), None)


@pytest.fixture
def daemon(roost: Roost) -> Iterator[Daemon]:
    """A daemon not yet started: set ``daemon.settings`` first if the test needs other config."""
    runtime = Path(tempfile.mkdtemp(prefix="rd", dir="/tmp"))
    runtime.chmod(0o700)
    found = Daemon(roost, runtime, free_port())
    yield found
    if found.proc is not None and found.proc.poll() is None:
        found.proc.kill()
        found.proc.wait(10)
    shutil.rmtree(runtime, ignore_errors=True)


@pytest.fixture
def running(daemon: Daemon) -> Daemon:
    """A daemon already answering."""
    daemon.start()
    return daemon


def pid_start_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        return int(stat.read().rsplit(b")", 1)[1].split()[19])
