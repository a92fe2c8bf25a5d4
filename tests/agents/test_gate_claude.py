"""The real Claude Code with roost's permission gate (``rosterd integrate install claude --gate``):
its permission dialog answered from rosterd, and still from the terminal.

Claude draws the dialog while the gate's hook runs. An allow from the API (or from MCP) runs the
tool, a deny from ``rosterd deny`` refuses it and tells the model why; a person who answers the dialog first
ends the hook, and rosterd then refuses an answer instead of answering twice; a gate that times
out leaves the dialog to the person; the web app's Allow on the pane's sidebar row runs the tool.
Each test types at Claude as a person would. The first three run twice: with the gate as a
command (``rosterd-hook --gate``) and as an HTTP hook to the daemon's gate URL (``--http --gate``),
where the person answering first makes Claude hang up on the daemon.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.agents.conftest import TURN_TIMEOUT, AgentPane
from tests.conftest import BIN, Roost
from tests.daemon.fixture import Daemon, daemon
from tests.mcpserver.client import ok, unix
from tests.web.conftest import chromium, page
from tests.web.test_browser import log_in, row

pytestmark = pytest.mark.agent  # and Chromium for one: a test has one tier, the costliest

__all__ = ["chromium", "daemon", "page"]

DIALOG = "Do you want to proceed?"
PAUSE = 1.0
"""A person's pause before pressing a key: Claude ignores keys that come right after a dialog draws."""


@pytest.fixture
def rosterd(request: pytest.FixtureRequest, roost: Roost, daemon: Daemon) -> Iterator[Daemon]:
    """A daemon started before Claude, whose socket its hooks find; a test's ``gate_timeout_s``
    comes as the fixture's parameter (default: an hour)."""
    daemon.settings["harness.claude"] = {"gate_timeout_s": getattr(request, "param", 3600)}
    roost.env["XDG_RUNTIME_DIR"] = str(daemon.runtime)
    daemon.start()
    yield daemon


def ask(claude: AgentPane, prompt: str = "please run TOOL") -> None:
    claude.keys("-l", prompt)
    time.sleep(0.3)  # typed, not pasted
    claude.keys("Enter")


def held(daemon: Daemon, claude: AgentPane) -> dict[str, Any]:
    """The pane's record once its dialog is on screen and the gate holds its request."""

    def found() -> dict[str, Any] | None:
        record = daemon.record_where(lambda r: (r.get("tmux") or {}).get("pane") == claude.pane)
        pending = (record or {}).get("pending") or {}
        return record if pending.get("answerable") and DIALOG in claude.screen() else None

    return daemon.wait_for(found, TURN_TIMEOUT, "the dialog on screen and its request held")


def answer(daemon: Daemon, record: dict[str, Any], **body: Any) -> Any:
    with daemon.unix(timeout=30) as client:
        return client.post(f"/sessions/{record['session_key']}/permission", json=body)


@pytest.mark.parametrize("claude", ["gate", "gate-http"], indirect=True)
def test_an_allow_from_the_api_runs_the_tool(rosterd: Daemon, claude: AgentPane) -> None:
    ask(claude)
    record = held(rosterd, claude)
    pending = record["pending"]
    assert (pending["tool"], pending["summary"]) == ("Bash", "Bash: touch x")
    assert {o["kind"] for o in pending["options"]} >= {"allow_once", "reject_once"}
    began = time.monotonic()
    answered = answer(rosterd, record, option="allow", request_id=pending["id"])
    assert answered.status_code == 200, answered.text
    claude.wait(lambda: (claude.project / "x").exists(), TURN_TIMEOUT, "the tool to run")
    claude.timed("gate: API allow to the tool run", time.monotonic() - began)
    claude.wait_state("done")
    assert DIALOG not in claude.screen()
    after = rosterd.record_where(lambda r: r["session_key"] == record["session_key"])
    assert (after["activity"], after["pending"]) == ("idle", None)


@pytest.mark.parametrize("claude", ["gate", "gate-http"], indirect=True)
def test_a_deny_from_the_cli_refuses_the_tool_and_tells_the_model_why(
    roost: Roost, rosterd: Daemon, claude: AgentPane
) -> None:
    ask(claude)
    record = held(rosterd, claude)
    proc = subprocess.run(
        [str(BIN / "rosterd"), "deny", record["session_key"], "--reason", "not on a Friday", "--json"],
        capture_output=True,
        text=True,
        env=rosterd.env,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["record"]["activity_event"] == "permission_answered"
    claude.wait_state("done")
    assert not (claude.project / "x").exists()
    told = json.dumps([r.body for r in claude.api.requests])
    assert "not on a Friday" in told  # the tool's refusal reached the model with its reason


@pytest.mark.parametrize("claude", ["gate", "gate-http"], indirect=True)
def test_the_terminal_still_answers_while_the_gate_waits(rosterd: Daemon, claude: AgentPane) -> None:
    ask(claude)
    record = held(rosterd, claude)
    time.sleep(PAUSE)
    claude.keys("1")
    claude.wait(lambda: (claude.project / "x").exists(), TURN_TIMEOUT, "the tool to run")
    claude.wait_state("done")
    late = answer(rosterd, record, option="reject", request_id=record["pending"]["id"])
    assert late.status_code == 409
    assert late.json()["code"] in ("nothing_pending", "answer_in_terminal")
    gates = subprocess.run(["pgrep", "-f", "rosterd-hook --gate"], capture_output=True, text=True)
    assert gates.stdout == ""  # Claude ended the hook when the person answered


@pytest.mark.parametrize("rosterd", [2], indirect=True)
@pytest.mark.parametrize("claude", ["gate"], indirect=True)
def test_when_the_gate_times_out_the_dialog_is_the_persons(rosterd: Daemon, claude: AgentPane) -> None:
    ask(claude)
    record = held(rosterd, claude)

    def let_go() -> dict[str, Any] | None:
        now = rosterd.record_where(lambda r: r["session_key"] == record["session_key"])
        return now if now and now["pending"] and not now["pending"]["answerable"] else None

    rosterd.wait_for(let_go, 10, "the gate to let go after 2 s")
    assert DIALOG in claude.screen()  # nothing decided: the dialog waits on the person
    refused = answer(rosterd, record, option="allow")
    assert (refused.status_code, refused.json()["code"]) == (409, "answer_in_terminal")
    claude.keys("1")
    claude.wait(lambda: (claude.project / "x").exists(), TURN_TIMEOUT, "the tool to run")
    claude.wait_state("done")


@pytest.mark.parametrize("claude", ["gate"], indirect=True)
def test_the_web_apps_allow_runs_the_tool(web: Any, claude: AgentPane, page: Any) -> None:
    """The sidebar row of the Claude pane shows what it asks; its Allow is Claude's decision."""
    log_in(page, web)
    ask(claude)
    held(web.daemon, claude)
    request = f"{row(claude.pane)} .request"
    page.wait_for_selector(f'{request} button[data-answer="allow"]')
    assert page.locator(f"{request} .summary").inner_text() == "Bash: touch x"
    page.click(f'{request} button[data-answer="allow"]')
    claude.wait(lambda: (claude.project / "x").exists(), TURN_TIMEOUT, "the tool to run")
    page.wait_for_selector(request, state="detached")
    claude.wait_state("done")
    # The person answered from the sidebar and never opened the pane's terminal, so the turn's
    # end is not shown to them yet: done, as the pane's badge says. Opening it shows it: idle.
    badge = f"{row(claude.pane)} .badge"
    page.wait_for_selector(f'{badge}[data-state="done"]')
    page.click(row(claude.pane))
    page.wait_for_selector(f'{badge}[data-state="idle"]')
    assert claude.state() == "done"  # a look from the page is not a look in tmux


@pytest.mark.parametrize("claude", ["gate"], indirect=True)
def test_an_allow_from_mcp_runs_the_tool(rosterd: Daemon, claude: AgentPane) -> None:
    """Another agent's session.allow, through rosterd's MCP server, is Claude's decision."""
    ask(claude)
    record = held(rosterd, claude)
    answered = ok(
        unix(rosterd), "session.allow", name=record["session_key"], request_id=record["pending"]["id"]
    )
    assert answered["record"]["activity_event"] == "permission_answered"
    claude.wait(lambda: (claude.project / "x").exists(), TURN_TIMEOUT, "the tool to run")
    claude.wait_state("done")
