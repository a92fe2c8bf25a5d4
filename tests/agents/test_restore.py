"""``roost restore`` with real Claude Code and Codex: a turn, a reboot, a restore, and the next
``roost send`` reaches the same conversation, through the same model endpoint and flags.

The agents start with a flag of the test's that shows in their requests (Claude's
``--append-system-prompt``, Codex's ``--model``), Claude with its endpoint in its own
environment only (``env ANTHROPIC_BASE_URL=… claude``), never in the environment restore runs
in: a restored agent that reaches the fake API with that flag's mark and the earlier turn in its
request got all three from the layout record. Keys are never recorded, so the environment
restore runs in holds Claude's key, as a person's login environment does.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.agents.conftest import API_KEY, CLAUDE_QUIET, START_TIMEOUT, AgentPane, transcript_settled
from tests.cli.roost.layoutrecord import reboot, recorded_panes, wait_recorded
from tests.conftest import Roost
from tests.fakes.model_api import reply_for

pytestmark = pytest.mark.agent

FIRST, AFTER = "remember the word heron", "what did I ask you to remember"


def turn(roost: Roost, agent: AgentPane, prompt: str) -> None:
    """A prompt to a pane whose badge is fresh (its first turn is not numbered): sent, done."""
    proc = roost.run("send", agent.name, prompt)
    assert proc.returncode == 0, proc.stderr
    agent.wait_state("done")


def restored(roost: Roost, agent: AgentPane, flags: tuple[str, ...]) -> AgentPane:
    """Reboot, restore, and the restored agent at its idle prompt."""
    wait_recorded(roost, 1, agents=1)
    [recorded] = [pane["agent"] for pane in recorded_panes(roost)]
    assert recorded["argv"][-len(flags) :] == list(flags)
    assert recorded["cwd"] == str(agent.project)
    session_id = recorded["session_id"]
    reboot(roost)

    doc = roost.json("restore", "--json")
    [pane] = doc["panes"]
    assert (pane["kind"], pane["action"], pane["restored"], pane["session_id"]) == (
        "agent",
        "resume",
        True,
        session_id,
    )
    assert session_id in pane["command"] and pane["command"].endswith(" ".join(flags))
    again = AgentPane(roost, agent.name, pane["pane_id"], agent.project, agent.api)
    again.wait(lambda: "? for shortcuts" in again.screen(), START_TIMEOUT, "the resumed agent's prompt")
    status = roost.json("status", "--json")["panes"]
    assert [(p["harness"], p["session_id"]) for p in status] == [(agent.name, session_id)]
    return again


def continued(roost: Roost, agent: AgentPane, flagged: Callable[[dict], bool]) -> None:
    """The next turn reaches the restored conversation: the earlier turn is in the request the
    fake API sees, which shows the agent's flag (``flagged``); its badge and kept reply are this
    turn's."""
    before = len(agent.api.requests)
    began = time.monotonic()
    turn(roost, agent, AFTER)
    agent.timed("restore to a turn's end", time.monotonic() - began)
    # The conversation's requests carry the agent's tools; a side call that names the prompt
    # (Codex's thread title, asked beside the turn and sometimes after it) carries none.
    asked = [
        r.body for r in agent.api.requests[before:] if AFTER in json.dumps(r.body) and r.body.get("tools")
    ]
    assert asked, f"the fake API saw no request with {AFTER!r}"
    seen = json.dumps(asked[-1])
    assert FIRST in seen, seen
    assert json.dumps(reply_for(FIRST))[1:-1] in seen, seen
    assert flagged(asked[-1]), asked[-1]
    read = roost.run("read", agent.pane)
    assert (read.returncode, read.stdout) == (0, reply_for(AFTER))
    assert agent.state() == "done"

    twice = roost.json("restore", "--json")
    assert twice["restored"] == 0 and twice["panes"][0]["reason"] == "this layout was already restored"
    assert len(roost.tmux("list-panes", "-a", "-F", "#{pane_id}").split()) == 1


CLAUDE_FLAGS = ("--append-system-prompt", "Started-by-roost-restore-test.")


@pytest.mark.parametrize("agent_flags", [CLAUDE_FLAGS])
def test_claude_resumes_its_conversation_through_its_endpoint_and_flags(
    roost: Roost, claude: AgentPane
) -> None:
    turn(roost, claude, FIRST)
    transcript_settled(Path(roost.option(claude.pane, "@roost-transcript-path")))  # before the reboot
    wait_recorded(roost, 1, agents=1)
    [recorded] = [pane["agent"] for pane in recorded_panes(roost)]
    assert recorded["env"] == {"ANTHROPIC_BASE_URL": claude.api.url}  # and never the key
    roost.env.update(ANTHROPIC_API_KEY=API_KEY, **CLAUDE_QUIET)
    again = restored(roost, claude, CLAUDE_FLAGS)
    continued(roost, again, lambda body: CLAUDE_FLAGS[1] in json.dumps(body.get("system")))


CODEX_FLAGS = ("--model", "gpt-restored")


@pytest.mark.parametrize("agent_flags", [CODEX_FLAGS])
def test_codex_resumes_its_conversation_with_its_flags(roost: Roost, codex: AgentPane) -> None:
    turn(roost, codex, FIRST)
    again = restored(roost, codex, CODEX_FLAGS)
    continued(roost, again, lambda body: body.get("model") == "gpt-restored")
