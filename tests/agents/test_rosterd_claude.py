"""The real Claude Code under a running rosterd: one turn with a permission dialog is followed
active -> needs_attention -> active -> idle, told by the hooks when they are installed and by
screen detection alone when they are not (``rosterd integrate uninstall claude``)."""

from __future__ import annotations

import json
import queue
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.agents.conftest import TURN_TIMEOUT, AgentPane
from tests.api.sse import Events
from tests.conftest import BIN, Roost
from tests.daemon.fixture import Daemon, daemon

pytestmark = pytest.mark.agent

__all__ = ["daemon"]

DIALOG = "Do you want to proceed?"
TURN = ["active", "needs_attention", "active", "idle"]


@pytest.fixture
def rosterd(roost: Roost, daemon: Daemon) -> Iterator[Daemon]:
    """A daemon started before Claude, whose socket the panes' hooks find (same runtime dir)."""
    roost.env["XDG_RUNTIME_DIR"] = str(daemon.runtime)
    daemon.start()
    yield daemon


def listed(daemon: Daemon, pane: str) -> dict[str, Any]:
    """The pane's row in ``rosterd list --json``."""
    proc = subprocess.run(
        [str(BIN / "rosterd"), "list", "--json"], capture_output=True, text=True, env=daemon.env, timeout=30
    )
    assert proc.returncode == 0, proc.stderr
    rows = [r for r in json.loads(proc.stdout)["records"] if (r.get("tmux") or {}).get("pane") == pane]
    assert len(rows) == 1, proc.stdout
    return rows[0]


def one_turn(daemon: Daemon, claude: AgentPane) -> tuple[list[str], dict[str, Any]]:
    """Run a turn that asks for ``touch x``, approve it, and return the pane's activities as the
    change stream told them (repeats collapsed, from the turn's first ``active``) and its last record."""
    seen: list[str] = []
    last: dict[str, Any] = {}
    with Events(daemon.unix(timeout=TURN_TIMEOUT), "/changes") as stream:
        # SLOW holds the answer after the tool's result back a few seconds: the agent is then
        # visibly working again, not only for the few ms an instant answer would take.
        claude.keys("-l", "please run TOOL SLOW")
        time.sleep(0.3)  # typed, not pasted: Claude takes a fast burst of keys as a paste
        claude.keys("Enter")
        dialog_seen = approved = False
        deadline = time.monotonic() + TURN_TIMEOUT
        while not (approved and seen[-1:] == ["idle"]):
            assert time.monotonic() < deadline, f"activities so far: {seen}\n{claude.screen()}"
            try:
                frame = stream.next(0.2)
            except queue.Empty:  # no frame this time: look at the screen
                frame = None
            record = (frame.data.get("record") or {}) if frame is not None else {}
            if (record.get("tmux") or {}).get("pane") == claude.pane:
                last = record
                if (seen or record["activity"] == "active") and seen[-1:] != [record["activity"]]:
                    seen.append(record["activity"])
            if not dialog_seen and DIALOG in claude.screen():
                dialog_seen = True
                time.sleep(1)  # Claude ignores keys that come too soon after a dialog opens
                claude.keys("1")
                approved = True
    return seen, last


def test_the_hooks_tell_the_turn(rosterd: Daemon, claude: AgentPane) -> None:
    seen, last = one_turn(rosterd, claude)
    assert seen == TURN
    assert (claude.project / "x").exists()
    row = listed(rosterd, claude.pane)
    assert (row["activity"], row["harness"]) == ("idle", "claude")
    assert "hook" in row["sources"]
    explain = rosterd.get(f"/sessions/{last['session_key']}/explain")
    assert explain["fields"]["activity"]["source"] == "hook"


@pytest.mark.parametrize("claude", [False], indirect=True)
def test_the_screen_alone_tells_the_same_turn(rosterd: Daemon, claude: AgentPane) -> None:
    assert claude.state() == ""  # no hooks: nothing badges the pane
    seen, last = one_turn(rosterd, claude)
    assert seen == TURN
    assert (claude.project / "x").exists()
    row = listed(rosterd, claude.pane)
    assert (row["activity"], row["harness"]) == ("idle", "claude")
    assert "hook" not in row["sources"] and "screen" in row["sources"]
    explain = rosterd.get(f"/sessions/{last['session_key']}/explain")
    assert explain["fields"]["activity"]["source"] == "screen"
