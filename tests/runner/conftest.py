"""A real daemon running headless sessions over the fake ACP adapter (tests/fakes/acp_adapter.py).

Holders run in sessions of their own and outlive the daemon by design, so the fixture ends
every holder its test left (by the pid in each state file) before the leak guard looks.
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from tests.conftest import Roost
from tests.daemon.fixture import Daemon, daemon
from tests.signals import holds, send_exactly, signal_if, started

ADAPTER = Path(__file__).resolve().parents[1] / "fakes" / "acp_adapter.py"

__all__ = ["Headless", "daemon", "headless"]


@dataclass
class Headless:
    """The daemon, and what a test needs to drive its headless sessions."""

    daemon: Daemon
    state: Path

    @property
    def holders(self) -> Path:
        return self.daemon.runtime / "roost" / "holders"

    @property
    def kept(self) -> Path:
        return self.daemon.roost.root / "state" / "roost" / "headless"

    def post(self, path: str, body: Any = None, timeout: float = 30) -> httpx.Response:
        with self.daemon.unix(timeout=timeout) as client:
            return client.post(path, json=body if body is not None else {})

    def start(self, **body: Any) -> dict[str, Any]:
        answer = self.post("/sessions", {"harness": "fake", "cwd": str(self.daemon.roost.root), **body})
        assert answer.status_code == 201, answer.text
        return answer.json()["record"]

    def prompt(self, key: str, text: str, **body: Any) -> httpx.Response:
        return self.post(f"/sessions/{key}/prompt", {"text": text, **body}, timeout=60)

    def record(self, key: str) -> dict[str, Any]:
        return self.daemon.get(f"/sessions/{key}")

    def until(self, key: str, timeout: float = 10, **want: Any) -> dict[str, Any]:
        def matches() -> dict[str, Any] | None:
            with self.daemon.unix() as client:
                answer = client.get(f"/sessions/{key}")
            if answer.status_code != 200:
                return None
            record = answer.json()
            return record if all(record.get(k) == v for k, v in want.items()) else None

        return self.daemon.wait_for(matches, timeout, what=f"{key} with {want}")

    def holder_pids(self) -> list[int]:
        """The pid each holder state file names, whether or not that holder still runs."""
        return [pid for _, pid in self.named_holders()]

    def live_holders(self) -> list[int]:
        """The holders that still run: a state file outlives a holder that crashed, and the pid
        it names may since have been given to another test's process."""
        return [pid for key, pid in self.named_holders() if _holder(key, pid)]

    def named_holders(self) -> list[tuple[str, int]]:
        """Each holder state file's key and the pid it names."""
        found = []
        for path in self.holders.glob("*.json") if self.holders.is_dir() else []:
            try:
                found.append((path.stem, int(json.loads(path.read_text())["holder_pid"])))
            except (OSError, ValueError, KeyError):
                continue
        return found


def _holder(key: str, pid: int) -> bool:
    """Whether ``pid`` is the running holder of ``key`` (a zombie's command line is empty)."""
    return holds(pid, b"\0--key\0" + key.encode() + b"\0")


def sessions(found: Headless) -> list[dict[str, Any]]:
    """The daemon's headless sessions: the rest of its roster is whatever agents its scan finds
    on the machine, other tests' included, which come and go as they please."""
    return [record for record in found.daemon.snapshot()["records"] if record["lane"] == "headless"]


def end_holders(found: Headless) -> None:
    """SIGTERM to every holder still running, and a wait for them to end."""
    for key, pid in found.named_holders():
        signal_if(pid, signal.SIGTERM, lambda key=key, pid=pid: _holder(key, pid))
    deadline = time.monotonic() + 10
    while found.live_holders() and time.monotonic() < deadline:
        time.sleep(0.05)


def power_cut(found: Headless) -> None:
    """The daemon, every holder and every adapter end at once, as when the machine goes down."""
    found.daemon.stop(signal.SIGKILL)
    for holder in found.live_holders():
        with contextlib.suppress(psutil.Error):
            tree = [holder, *(child.pid for child in psutil.Process(holder).children(recursive=True))]
            for pid, ticks in [(pid, started(pid)) for pid in tree]:
                send_exactly(pid, ticks)
    end_holders(found)


@pytest.fixture
def headless(daemon: Daemon, roost: Roost) -> Iterator[Headless]:
    """A daemon (not started: ``headless.daemon.start()``) whose ``fake`` harness is the fake adapter."""
    state = roost.root / "fake-acp"
    state.mkdir()
    roost.env["FAKE_ACP_STATE"] = str(state)
    daemon.settings["harness.fake"] = {"adapter": f"{sys.executable} {ADAPTER}"}
    daemon.settings["runner"] = {"idle_timeout_s": 600}
    found = Headless(daemon, state)
    yield found
    if daemon.proc is not None and daemon.proc.poll() is None:
        daemon.stop()
    end_holders(found)
