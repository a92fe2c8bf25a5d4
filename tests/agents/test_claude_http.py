"""The real Claude Code 2.1.332 with its hooks as commands and as HTTP posts to the daemon's hook
port: the same turns must leave the same badges, turn numbers, kept replies, events-log lines
and roster records either way, and with HTTP hooks the daemon must have acted on Claude's posts
(``GET /status`` counts them) and refused none. SessionStart is a command both ways: Claude
runs that event as a command only.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.agents.conftest import TURN_TIMEOUT, AgentPane
from tests.agents.test_claude import DIALOG
from tests.conftest import Roost
from tests.daemon.fixture import Daemon, daemon
from tests.fakes.model_api import reply_for

pytestmark = pytest.mark.agent

__all__ = ["daemon"]

KEPT = ("event", "from", "to", "turn", "reason")
"""What an events-log line says that two runs of the same turns must agree on (not ids, times)."""


@pytest.fixture
def rosterd(roost: Roost, daemon: Daemon) -> Daemon:
    """A daemon started before Claude, whose socket the panes' command hooks find."""
    roost.env["XDG_RUNTIME_DIR"] = str(daemon.runtime)
    daemon.start()
    return daemon


def turns(roost: Roost, daemon: Daemon, claude: AgentPane) -> dict[str, Any]:
    """A plain turn, then one whose permission dialog is approved; what roost made of them. The
    prompt can be drawn before the SessionStart hook's badge lands (the first Claude of a run,
    cold): it is waited for."""
    claude.wait_state("idle", 10)
    sent = roost.run("send", claude.name, "hello from roost")
    assert (sent.returncode, sent.stdout) == (0, f"{claude.pane} 1\n"), sent.stderr
    assert roost.run("wait-done", "--turn", "1", claude.pane, str(TURN_TIMEOUT)).returncode == 0
    first = roost.run("read", "--turn", "1", claude.pane).stdout
    assert roost.run("send", claude.name, "please run TOOL").returncode == 0
    claude.wait(lambda: DIALOG in claude.screen() and claude.state() == "blocked", TURN_TIMEOUT, "the dialog")
    reason = roost.option(claude.pane, "@roost-reason")
    time.sleep(1)  # Claude ignores keys that come too soon after a dialog opens
    claude.keys("1")
    claude.wait_state("done")
    second = roost.run("read", claude.pane).stdout

    def settled() -> dict[str, Any] | None:
        found = daemon.record_where(lambda r: (r.get("tmux") or {}).get("pane") == claude.pane)
        return found if found and found["activity"] == "idle" and found["recap"] else None

    record = claude.wait(settled, TURN_TIMEOUT, "the roster's record of the turn") and settled()
    assert record is not None
    return {
        "replies": [first, second],
        "reason": reason,
        "turn": roost.option(claude.pane, "@roost-turn"),
        "events": [{k: e.get(k) for k in KEPT} for e in claude.events()],
        "record": {k: record[k] for k in ("harness", "activity", "activity_event", "recap", "error_reason")},
        "sources": sorted(set(record["sources"]) & {"hook", "scan"}),
    }


EXPECTED = {
    "replies": [reply_for("hello from roost"), f"TOOL-DONE:{reply_for('please run TOOL')}"],
    "reason": "Bash: touch x",
    "turn": "2",
    "events": [
        {"event": "state", "from": before, "to": after, "turn": turn, "reason": reason}
        for before, after, turn, reason in (
            (None, "idle", None, ""),
            ("idle", "working", 1, ""),
            ("working", "done", 1, ""),
            ("done", "working", 2, ""),
            ("working", "blocked", 2, "Bash: touch x"),
            ("blocked", "working", 2, ""),
            ("working", "done", 2, ""),
        )
    ],
    "record": {
        "harness": "claude",
        "activity": "idle",
        "activity_event": "Stop",
        "recap": f"TOOL-DONE:{reply_for('please run TOOL')}",
        "error_reason": None,
    },
    "sources": ["hook", "scan"],
}


@pytest.mark.parametrize("claude", [True, "http"], indirect=True, ids=["command", "http"])
def test_command_and_http_hooks_tell_the_same_turns(
    request: pytest.FixtureRequest, roost: Roost, rosterd: Daemon, claude: AgentPane
) -> None:
    assert turns(roost, rosterd, claude) == EXPECTED
    counts = rosterd.get("/status")["hooks"]["counts"]
    posted = request.node.callspec.params["claude"] == "http"
    assert counts["refused"] == 0
    assert (counts["applied"] > 0) == posted, counts
