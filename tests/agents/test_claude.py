"""Claude Code 2.1.332 driven through roost: turns, permission dialogs and API failures.

The model is tests/fakes/anthropic_api.py; the words in a prompt choose what it does (TOOL,
SLOW, FAIL). Every assertion is about what roost shows: the pane's badge, its events log and
what ``roost send``/``wait-done``/``read`` print and exit with.
"""

from __future__ import annotations

import time

import pytest

from roost.pane.state.panestate import DECLINED
from tests.agents.conftest import TURN_TIMEOUT, AgentPane
from tests.conftest import Roost
from tests.fakes.model_api import reply_for

pytestmark = pytest.mark.agent

DIALOG = "Do you want to proceed?"


def first_turn(roost: Roost, claude: AgentPane, prompt: str) -> None:
    """Claude's SessionStart badged the fresh pane idle, so even its first prompt is a numbered turn."""
    assert claude.state() == "idle"
    proc = roost.run("send", claude.name, prompt)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{claude.pane} 1\n"
    claude.wait_state("done")


def test_send_names_the_turn_wait_done_waits_read_returns_the_streamed_reply(
    roost: Roost, claude: AgentPane
) -> None:
    first_turn(roost, claude, "hello from roost")
    assert claude.api.streamed == [reply_for("hello from roost")]

    began = time.monotonic()
    proc = roost.run("send", claude.name, "take your time SLOW")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{claude.pane} 2\n"
    assert claude.state() == "working"
    time.sleep(1)

    done = roost.run("wait-done", "--turn", "2", claude.pane, str(TURN_TIMEOUT))
    assert done.returncode == 0, done.stderr
    claude.timed("one turn (send to wait-done, model thinks 4 s)", time.monotonic() - began)
    assert claude.state() == "done"
    streamed = reply_for("take your time SLOW")
    assert claude.api.streamed[-1] == streamed

    read = roost.run("read", "--turn", "2", claude.pane)
    assert read.returncode == 0, read.stderr
    assert read.stdout == streamed
    assert read.stderr == ""

    began = time.monotonic()
    doc = roost.json("send", "--json", claude.name, "and a third")
    assert doc["pane"] == claude.pane
    assert doc["turn"] == 3
    assert doc["started"] is True
    assert roost.run("wait-done", "--turn", "3", claude.pane, str(TURN_TIMEOUT)).returncode == 0
    claude.timed("one turn (send to wait-done, instant model)", time.monotonic() - began)
    reply = roost.json("read", "--json", "--turn", "3", claude.pane)
    assert reply["source"] == "reply"
    assert reply["turn"] == 3
    assert reply["text"] == reply_for("and a third")
    assert reply["stale"] is False


def open_dialog(roost: Roost, claude: AgentPane, prompt: str = "please run TOOL") -> float:
    """Ask for ``touch x``; returns how long after the dialog appeared the badge said blocked."""
    assert roost.run("send", claude.name, prompt).returncode == 0
    seen: dict[str, float] = {}

    def both() -> bool:
        now = time.monotonic()
        if "dialog" not in seen and DIALOG in claude.screen():
            seen["dialog"] = now
        if "blocked" not in seen and claude.state() == "blocked":
            seen["blocked"] = now
        return len(seen) == 2

    claude.wait(both, TURN_TIMEOUT, "the permission dialog and the blocked badge")
    return seen["blocked"] - seen["dialog"]


def test_permission_dialog_blocks_and_approving_it_finishes_the_turn(roost: Roost, claude: AgentPane) -> None:
    lag = open_dialog(roost, claude)
    claude.timed("badge blocked minus dialog on screen", lag)
    assert lag <= 1.0
    assert roost.option(claude.pane, "@roost-reason") == "Bash: touch x"

    refused = roost.run("send", claude.name, "are you there")
    assert refused.returncode == 3
    assert "needs input" in refused.stderr
    assert DIALOG in claude.screen()
    assert not (claude.project / "x").exists()

    time.sleep(1)  # a person takes a moment; Claude ignores keys that come too soon after a dialog opens
    claude.keys("1")
    claude.wait_state("done")
    assert (claude.project / "x").exists()
    assert claude.transitions()[-3:] == [("working", "blocked"), ("blocked", "working"), ("working", "done")]
    read = roost.run("read", claude.pane)
    assert read.stdout == f"TOOL-DONE:{reply_for('please run TOOL')}"


def test_a_look_keeps_an_open_dialog_blocked_and_declining_it_clears_blocked(
    roost: Roost, claude: AgentPane
) -> None:
    """Claude fires no hook when a dialog is declined; roost reads that off the transcript.

    Claude writes its transcript as the dialog opens, so a look at an open dialog must not
    take that write for an answer. The fake model asks for the tool 0.35 s into a second,
    which puts that write (about 0.2 s later) past the half second, where whole-second
    stamps go wrong; three rounds make a one-off timing unlikely to hide a fault.
    """
    for round in range(3):
        open_dialog(roost, claude, f"please run TOOL AT.35 round {round}")
        assert roost.run("read", claude.pane).returncode == 0
        assert claude.state() == "blocked", "roost read took the open dialog for a declined one"
        assert roost.run("send", claude.name, "are you there").returncode == 3
        assert claude.state() == "blocked"
        time.sleep(1)  # a person takes a moment to answer
        claude.keys("Escape")
        claude.wait(lambda: DIALOG not in claude.screen(), TURN_TIMEOUT, "the dialog to close")
        claude.wait(
            lambda: roost.run("read", claude.pane).returncode == 0 and claude.state() == "",
            10,
            "roost read to clear the declined dialog's badge",
        )
        last = claude.events()[-1]
        assert (last["from"], last["to"], last["reason"]) == ("blocked", None, DECLINED)
    assert not (claude.project / "x").exists()
    assert roost.run("send", claude.name, "never mind").returncode == 0
    claude.wait_state("done")


def test_an_api_error_badges_error_with_a_reason(roost: Roost, claude: AgentPane) -> None:
    first_turn(roost, claude, "a good turn first")
    proc = roost.run("send", claude.name, "this will FAIL")
    assert proc.returncode == 0, proc.stderr
    claude.wait_state("error")
    reason = roost.option(claude.pane, "@roost-reason")
    # StopFailure carries "error": "unknown" and the message Claude showed as last_assistant_message.
    assert "400" in reason, f"the error badge's reason says nothing about the failure: {reason!r}"
    waited = roost.run("wait-done", claude.pane, "10")
    assert waited.returncode == 1
    assert "error" in waited.stderr
    doc = roost.json("read", "--json", claude.pane)
    assert doc["state"] == "error"
    assert doc["stale"] is True
    assert doc["error_reason"] == reason
