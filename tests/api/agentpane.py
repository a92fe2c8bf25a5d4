"""A fake agent in a pane of the test's tmux server, known to a real daemon, its input logged.

The agent runs with ``ROOST_AGENT=claude``, so the daemon's scan sees it as the pane's agent
(its occupant), and it fires its hooks through the real ``rosterd-hook``, so its state reaches
the roster as an integration would report it. Every byte the pane delivers to it is appended
to its log: the one place a test proves what reached the agent, or that nothing did.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from tests.conftest import Roost
from tests.daemon.fixture import Daemon

GENEROUS = 20.0  # seconds for anything that waits on a loaded machine
QUIET = 1.0  # seconds to let a byte that should not come have its chance to arrive


def path(pane: str, suffix: str = "") -> str:
    """A session path segment: ``%N`` percent-encoded."""
    return quote(pane, safe="") + suffix


@dataclass
class AgentPane:
    roost: Roost
    daemon: Daemon
    pane: str
    log: Path

    def received(self) -> bytes:
        return self.log.read_bytes() if self.log.exists() else b""

    def row(self) -> dict[str, Any] | None:
        with self.daemon.unix() as client:
            response = client.get(f"/agents/{path(self.pane)}")
        if response.status_code == 404:
            return None
        assert response.status_code == 200, response.text
        return response.json()

    def wait_row(self, predicate: Callable[[dict[str, Any]], bool], what: str) -> dict[str, Any]:
        found: dict[str, Any] = {}

        def check() -> bool:
            row = self.row()
            if row is not None and predicate(row):
                found.update(row)
                return True
            return False

        self.roost.wait_for(check, GENEROUS, what)
        return found

    def live_record(self) -> dict[str, Any] | None:
        return self.daemon.record_where(
            lambda r: (r.get("tmux") or {}).get("pane") == self.pane and r["liveness"] != "ended"
        )

    def record(self) -> dict[str, Any]:
        found = self.live_record()
        assert found is not None, self.daemon.snapshot()
        return found

    def state(self, word: str) -> None:
        """``roost state WORD`` as the pane's own program would run it."""
        env = {"TMUX": f"{self.roost.socket},1,0", "TMUX_PANE": self.pane}
        proc = self.roost.run("state", word, env=env)
        assert proc.returncode == 0, proc.stderr

    def post(self, suffix: str, body: dict[str, Any], timeout: float = 60) -> httpx.Response:
        with self.daemon.unix(timeout=timeout) as client:
            return client.post(f"/sessions/{path(self.pane, suffix)}", json=body)

    def wait_received(self, data: bytes) -> None:
        self.roost.wait_for(lambda: data in self.received(), GENEROUS, f"{data!r} in the agent's log")

    def nothing_arrives(self, before: bytes) -> None:
        """The log stays exactly as it was: no byte reached the agent."""
        time.sleep(QUIET)
        assert self.received() == before


def pins(row: dict[str, Any], text: str = "hello", **more: Any) -> dict[str, Any]:
    """A fenced prompt's body, pinned to what ``row`` showed."""
    return {
        "text": text,
        "status_epoch": row["status_epoch"],
        "occupant_id": row["occupant_id"],
        "revision": row["revision"],
        **more,
    }


def start_agent(
    roost: Roost,
    daemon: Daemon,
    *flags: str,
    name: str = "agent",
    restarting: bool = False,
    state: str | None = "idle",
) -> AgentPane:
    """A fake agent in its own tmux session, badged ``state`` so that it has a promptable row.
    With no state it has a record (the scan saw it) but no row: it fires no SessionStart then,
    since a start at its prompt is the agent saying it is idle. ``restarting`` runs it in a
    loop, so killing it puts a new process (a new occupant) in the same pane."""
    log = roost.root / f"{name}.log"
    start = ("--start-hook",) if state is not None else ()
    agent = roost.fake_agent("--log", str(log), *start, "--work", "1.5", *flags)
    line = f"ROOST_AGENT=claude {agent}"
    command = f"sh -c {shlex.quote(f'while :; do {line}; sleep 0.3; done')}" if restarting else line
    # A named window: tmux's automatic rename (from the command to its shell) would change
    # the record, and so its revision, after the row is read and pinned.
    pane = roost.start(command, session=name, window=name)
    roost.wait_screen(pane, "fake agent ready", GENEROUS)
    found = AgentPane(roost, daemon, pane, log)
    if state is None:
        roost.wait_for(lambda: found.live_record() is not None, GENEROUS, f"the scan saw {pane}")
        return found
    found.state(state)
    found.wait_row(lambda row: row["promptable"] and row["state"] == state, f"{pane} promptable and {state}")
    return found
