"""A declined dialog ends blocked everywhere, with nobody running a roost verb: the real agents.

Claude Code fires no hook when a person presses Esc on a dialog, so its hook's blocked would
stand until its next turn. The daemon reads the dialog leaving the screen and ends it: the
roster (and so the web app's sidebar), the pane's badge (what ``roost status`` reads) and the
events log all leave blocked within a second. Dialogs that are still open stay blocked: one
with a long diff, a question, a second dialog right after the first. Codex fires its own
event on a decline and must end the same way.

Each test watches from a browser (the sidebar row of the agent's pane) and from the daemon's
change stream at once, and types at the agent with ``tmux send-keys`` as a person would.
"""

from __future__ import annotations

import contextlib
import json
import queue
import time
from collections.abc import Iterator
from typing import Any

import pytest

from roost.pane.state.panestate import DECLINED
from tests.agents.conftest import TURN_TIMEOUT, AgentPane
from tests.api.sse import Events
from tests.conftest import Roost
from tests.daemon.fixture import Daemon, daemon
from tests.web.conftest import Web, chromium, page
from tests.web.test_browser import log_in, row

pytestmark = pytest.mark.agent  # and Chromium: a test has one tier, the costliest

__all__ = ["chromium", "daemon", "page"]

BOUND = 1.0
"""Seconds from the dialog leaving the screen to every reader saying it is no longer blocked."""
HOLD = 2.0
"""Seconds an open dialog is watched to stay blocked."""
PAUSE = 1.0
"""A person's pause before answering; Claude ignores keys that come right after a dialog draws."""


class Watch:
    """The agent's pane as its readers see it: the roster's stream, the pane badge, the sidebar."""

    def __init__(self, web: Web, agent: AgentPane, page: Any, stream: Events) -> None:
        self.web, self.agent, self.page, self.stream = web, agent, page, stream
        self.activity: str | None = None
        self.key: str | None = None

    def pump(self) -> None:
        """Take every frame the stream has for this pane."""
        while True:
            try:
                frame = self.stream.next(0.01)
            except queue.Empty:
                return
            assert frame is not None, "the change stream ended"
            snapshot = frame.data.get("snapshot") or {}
            for record in snapshot.get("records", [frame.data.get("record") or {}]):
                if (record.get("tmux") or {}).get("pane") == self.agent.pane:
                    self.activity, self.key = record["activity"], record["session_key"]

    def sidebar(self) -> str | None:
        badge = self.page.query_selector(f"{row(self.agent.pane)} .badge")
        return badge.get_attribute("data-state") if badge else None

    def readings(self) -> tuple[str | None, str, str | None]:
        self.pump()
        return self.activity, self.agent.state(), self.sidebar()

    def blocked_everywhere(self) -> bool:
        return self.readings() == ("needs_attention", "blocked", "blocked")

    def type(self, prompt: str) -> None:
        self.agent.keys("-l", prompt)
        time.sleep(0.3)  # typed, not pasted: a fast burst of keys reads as a paste
        self.agent.keys("Enter")

    def until_blocked(self, dialog: str) -> None:
        try:
            self.agent.wait(
                lambda: dialog in self.agent.screen() and self.blocked_everywhere(),
                TURN_TIMEOUT,
                f"{dialog!r} on screen, and blocked in the roster, the badge and the sidebar",
            )
        except AssertionError as error:
            raise AssertionError(f"{error}\n(roster, badge, sidebar): {self.readings()}") from None

    def stays_blocked(self) -> None:
        deadline = time.monotonic() + HOLD
        while time.monotonic() < deadline:
            assert self.blocked_everywhere(), f"an open dialog stopped reading blocked: {self.readings()}"
            time.sleep(0.05)

    def decline(self, dialog: str) -> None:
        """Esc after a person's pause; then every reader leaves blocked within ``BOUND`` of the
        dialog leaving the screen (``dialog``, a line only the open dialog shows, is gone)."""
        time.sleep(PAUSE)
        self.agent.keys("Escape")
        self.agent.wait(lambda: dialog not in self.agent.screen(), TURN_TIMEOUT, "the dialog to close")
        gone = time.monotonic()
        left: dict[str, float] = {}
        names = ("roster", "badge", "sidebar")
        while len(left) < len(names) and time.monotonic() - gone < BOUND * 5:
            for name, reading in zip(names, self.readings(), strict=True):
                if name not in left and reading not in ("needs_attention", "blocked"):
                    left[name] = time.monotonic() - gone
            time.sleep(0.02)
        assert len(left) == len(names), f"still blocked after {BOUND * 5} s: {self.readings()}"
        for name in names:
            self.agent.timed(f"declined dialog: {name} left blocked after", left[name])
        assert max(left.values()) <= BOUND, left


@pytest.fixture
def watch(web: Web, page: Any) -> Iterator[Any]:
    def start(agent: AgentPane) -> Watch:
        log_in(page, web)
        page.wait_for_selector(row(agent.pane))
        stream = streams.enter_context(Events(web.daemon.unix(timeout=TURN_TIMEOUT), "/changes"))
        return Watch(web, agent, page, stream)

    with contextlib.ExitStack() as streams:
        yield start


def events_log(roost: Roost, pane: str) -> list[dict[str, Any]]:
    """The pane's lines in the events log, read from the file: no roost verb runs."""
    log = roost.root / "state" / "roost" / "panes" / "events" / "log.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    return [line for line in lines if line["pane"] == pane]


def declined_everywhere(roost: Roost, daemon: Daemon, agent: AgentPane, watch: Watch) -> None:
    """After the decline: idle in the roster with the reason, no badge, the declined log line."""
    assert watch.readings() == ("idle", "", "idle")
    last = events_log(roost, agent.pane)[-1]
    assert (last["from"], last["to"], last["reason"]) == ("blocked", None, DECLINED)
    explain = daemon.get(f"/sessions/{watch.key}/explain")
    assert explain["overruled"][-1]["source"] == "hook"
    status = roost.json("status", "--json")
    [pane] = [p for p in status["panes"] if p["id"] == agent.pane]
    assert pane["state"] is None


def test_claude_declined_permission_dialog(roost: Roost, web: Web, claude: AgentPane, watch: Any) -> None:
    seen = watch(claude)
    seen.type("please run TOOL")
    seen.until_blocked("Do you want to proceed?")
    seen.decline("Do you want to proceed?")
    declined_everywhere(roost, web.daemon, claude, seen)
    assert not (claude.project / "x").exists()


def test_claude_question_stays_blocked_and_declining_it_ends(
    roost: Roost, web: Web, claude: AgentPane, watch: Any
) -> None:
    seen = watch(claude)
    seen.type("please ASK me")
    seen.until_blocked("Which colour should the button be?")
    seen.stays_blocked()
    seen.decline("Enter to select")
    declined_everywhere(roost, web.daemon, claude, seen)


def test_claude_long_diff_dialog_stays_blocked(roost: Roost, web: Web, claude: AgentPane, watch: Any) -> None:
    seen = watch(claude)
    seen.type("please WRITE it")
    seen.until_blocked("Do you want to create notes.txt?")
    seen.stays_blocked()
    claude.keys("1")
    claude.wait_state("done")
    assert (claude.project / "notes.txt").exists()


def test_claude_second_dialog_right_after_the_first_stays_blocked(
    roost: Roost, web: Web, claude: AgentPane, watch: Any
) -> None:
    seen = watch(claude)
    seen.type("please run TOOL TWICE")
    seen.until_blocked("Do you want to proceed?")
    time.sleep(PAUSE)
    claude.keys("1")
    claude.wait(lambda: (claude.project / "x").exists(), TURN_TIMEOUT, "the first command to run")
    seen.until_blocked("touch y")
    seen.stays_blocked()
    seen.decline("Do you want to proceed?")
    declined_everywhere(roost, web.daemon, claude, seen)
    assert not (claude.project / "y").exists()


def test_claude_approved_command_that_runs_on_reads_working(
    roost: Roost, web: Web, claude: AgentPane, watch: Any
) -> None:
    """Claude fires nothing between an approval and the command's end; the screen tells it."""
    seen = watch(claude)
    seen.type("please run TOOL LONG")
    seen.until_blocked("Do you want to proceed?")
    time.sleep(PAUSE)
    claude.keys("1")
    claude.wait(lambda: seen.readings() == ("active", "working", "working"), 3, "working while it runs")
    assert not (claude.project / "x").exists(), "the command ended before it was seen running"
    claude.wait_state("done")


def test_codex_declined_dialog(roost: Roost, web: Web, codex: AgentPane, watch: Any) -> None:
    seen = watch(codex)
    seen.type("please run TOOL")
    seen.until_blocked("Would you like to run the following command?")
    seen.decline("Would you like to run the following command?")
    assert seen.readings()[0] != "needs_attention"
