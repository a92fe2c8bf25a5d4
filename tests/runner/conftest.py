"""A real daemon running headless sessions over the fake ACP adapter (tests/fakes/acp_adapter.py).

Holders run in sessions of their own and outlive the daemon by design, so the fixture ends
every holder its test left (by the pid in each state file) before the leak guard looks.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Roost
from tests.daemon.fixture import Daemon, daemon

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
        pids = []
        for path in self.holders.glob("*.json") if self.holders.is_dir() else []:
            try:
                pids.append(int(json.loads(path.read_text())["holder_pid"]))
            except (OSError, ValueError, KeyError):
                continue
        return pids


def end_holders(found: Headless) -> None:
    for pid in found.holder_pids():
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in found.holder_pids()) and time.monotonic() < deadline:
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


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
