"""The real Claude Code and Codex in a browser terminal, through a running rosterd.

Each agent's screen reaches the page through the daemon's tap (``pipe-pane``); the prompt is
typed in the page, the permission dialog is read and answered in the page, and the session's
row in the sidebar follows the turn: working, needs input, working, done.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.agents.conftest import TURN_TIMEOUT, AgentPane
from tests.daemon.fixture import daemon
from tests.fakes.model_api import reply_for
from tests.web.conftest import Web, chromium, page
from tests.web.test_browser import log_in, open_terminal, row, wait_screen

pytestmark = pytest.mark.agent  # and Chromium: a test has one tier, the costliest

__all__ = ["chromium", "daemon", "page"]

PROMPT = "please run TOOL SLOW"


def badge(page: Any, pane: str, state: str) -> None:
    page.wait_for_selector(f'{row(pane)} .badge[data-state="{state}"]', timeout=TURN_TIMEOUT * 1000)


def shows(text: str) -> Any:
    return lambda lines: any(text in line for line in lines)


def a_turn_from_the_page(web: Web, agent: AgentPane, page: Any, dialog: str, approve: str) -> None:
    pane = agent.pane
    log_in(page, web)
    open_terminal(page, web, pane)
    wait_screen(page, pane, shows("? for shortcuts"), f"{agent.name}'s idle prompt in the page", 20)
    assert web.roost.tmux("display-message", "-p", "-t", pane, "#{pane_pipe}").strip() == "1"  # tapped

    page.keyboard.type(PROMPT, delay=15)  # typed, not pasted: a fast burst reads as a paste
    wait_screen(page, pane, shows(PROMPT), "the prompt, echoed by the agent, in the page")
    page.keyboard.press("Enter")
    badge(page, pane, "blocked")
    wait_screen(page, pane, shows(dialog), "the permission dialog in the page")
    page.wait_for_timeout(1000)  # a person's pause: Claude ignores keys that come right after a dialog draws
    page.keyboard.press(approve)
    badge(page, pane, "working")
    badge(page, pane, "idle")
    answer = f"TOOL-DONE:{reply_for(PROMPT)}".splitlines()[0]
    wait_screen(page, pane, shows(answer), "the answer in the page", TURN_TIMEOUT)
    assert (agent.project / "x").exists()
    assert answer in agent.screen()


def test_claude_turn_with_a_permission_dialog_driven_from_the_page(
    web: Web, claude: AgentPane, page: Any
) -> None:
    a_turn_from_the_page(web, claude, page, "Do you want to proceed?", "Enter")  # first choice: yes


def test_codex_turn_with_a_permission_dialog_driven_from_the_page(
    web: Web, codex: AgentPane, page: Any
) -> None:
    a_turn_from_the_page(web, codex, page, "Would you like to run the following command?", "y")
