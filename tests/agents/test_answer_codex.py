"""The real Codex in a pane, which offers no permission gate: its request is published with the
way to answer it (the terminal), and rosterd refuses to answer it for the person."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.agents.conftest import TURN_TIMEOUT, AgentPane
from tests.agents.test_gate_claude import ask
from tests.daemon.fixture import Daemon, daemon

pytestmark = pytest.mark.agent

__all__ = ["daemon"]

DIALOG = "Would you like to run the following command?"


def test_a_codex_request_is_shown_and_sent_to_its_terminal(web: Any, codex: AgentPane) -> None:
    daemon: Daemon = web.daemon
    ask(codex)

    def blocked() -> dict[str, Any] | None:
        record = daemon.record_where(lambda r: (r.get("tmux") or {}).get("pane") == codex.pane)
        return record if record and record["pending"] and DIALOG in codex.screen() else None

    record = daemon.wait_for(blocked, TURN_TIMEOUT, "Codex's dialog, and its request in the roster")
    pending = record["pending"]
    assert (pending["answerable"], pending["options"]) == (False, [])
    assert "touch x" in pending["summary"]
    with daemon.unix() as client:
        answer = client.post(f"/sessions/{record['session_key']}/permission", json={"option": "allow"})
    assert (answer.status_code, answer.json()["code"], answer.json()["pane"]) == (
        409,
        "answer_in_terminal",
        codex.pane,
    )
    assert not (codex.project / "x").exists()
    time.sleep(1)  # a person's pause: then the terminal answers it
    codex.keys("y")
    codex.wait(lambda: (codex.project / "x").exists(), TURN_TIMEOUT, "the command to run")
