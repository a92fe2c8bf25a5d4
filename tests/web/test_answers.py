"""Answering a pending request from the web app, in Debian's Chromium: the sidebar row, the
phone card, the bar over a terminal, a notification's action; and seeing it close when
someone else answered.

A pane's request is held by roost's gate (``rosterd-hook --gate``), run by a stand-in harness
in the pane (tests/fakes/gated_harness.py): what the gate's hook prints is what Claude Code
would act on. A pane whose harness has no gate shows its request with the way to its terminal.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import BIN, Roost
from tests.daemon.fixture import Daemon
from tests.web.conftest import Web
from tests.web.test_browser import log_in, row

pytestmark = pytest.mark.browser

HARNESS = Path(__file__).resolve().parents[1] / "fakes" / "gated_harness.py"
SUGGESTED = {
    "type": "addRules",
    "rules": [{"toolName": "Bash", "ruleContent": "touch:*"}],
    "behavior": "allow",
}


def payload(command: str = "touch x", always: bool = False) -> dict[str, Any]:
    return {
        "session_id": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
        "cwd": "/tmp",
        "hook_event_name": "PermissionRequest",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "permission_suggestions": [SUGGESTED] if always else [],
    }


class Gated:
    """A pane whose stand-in harness's gate holds one request."""

    def __init__(self, web: Web, where: Path, pane: str) -> None:
        self.web, self.where, self.pane = web, where, pane

    @property
    def daemon(self) -> Daemon:
        return self.web.daemon

    def record(self) -> dict[str, Any]:
        return self.daemon.wait_for(
            lambda: (
                (r := self.daemon.record_where(lambda r: (r.get("tmux") or {}).get("pane") == self.pane))
                and (r.get("pending") or {}).get("answerable")
                and r
            ),
            what="the pane's request held",
        )

    def decision(self) -> dict[str, Any]:
        done = self.where / "result.json"
        self.daemon.wait_for(done.exists, 15, "the gate to hear its answer")
        printed = json.loads(done.read_text())["stdout"]
        return json.loads(printed)["hookSpecificOutput"]["decision"]


@pytest.fixture
def gated(web: Web, roost: Roost) -> Iterator[Any]:
    """Start a pane whose gate holds a request; the panes' hooks find the daemon's socket."""
    roost.env["XDG_RUNTIME_DIR"] = str(web.daemon.runtime)
    count = [0]

    def start(request: dict[str, Any]) -> Gated:
        where = roost.root / f"gated{count[0]}"
        count[0] += 1
        where.mkdir()
        (where / "payload.json").write_text(json.dumps(request))
        # exec: the pane's process is the harness, as Claude's is in its pane
        command = "exec " + shlex.join([sys.executable, str(HARNESS), str(where)])
        pane = roost.start(command) if count[0] == 1 else roost.window(f"g{count[0]}", command)
        found = Gated(web, where, pane)
        found.record()
        return found

    yield start


def test_a_rows_request_is_answered_there_and_leaves_when_answered(page: Any, web: Web, gated: Any) -> None:
    held = gated(payload())
    log_in(page, web)
    request = f"{row(held.pane)} .request"
    page.wait_for_selector(request)
    assert page.locator(f"{request} .summary").inner_text() == "Bash: touch x"
    assert page.locator(f"{request} button").all_inner_texts() == ["Allow", "Deny"]
    assert page.locator(f"{row(held.pane)} .badge").get_attribute("data-state") == "blocked"
    page.click(f'{request} button[data-answer="allow"]')
    assert held.decision() == {"behavior": "allow"}
    [entry] = [e for e in web.daemon.get("/journal")["entries"] if e["kind"] == "answer"]
    assert (entry["answer"], entry["by"], entry["via"]) == ("allow", "browser", "web")
    page.wait_for_selector(request, state="detached")
    assert page.locator(f"{row(held.pane)} .badge").get_attribute("data-state") == "working"
    assert page.locator(".tab").count() == 0  # answering never opened the terminal


def test_an_answer_given_elsewhere_closes_the_request_on_the_page(page: Any, web: Web, gated: Any) -> None:
    held = gated(payload())
    log_in(page, web)
    page.click(f"{row(held.pane)} .name")  # the row's request box answers, its name opens
    bar = f'.view[data-pane="{held.pane}"] .request-bar .request'
    page.wait_for_selector(bar)
    assert page.locator(f"{bar} .summary").inner_text() == "Bash: touch x"
    record = held.record()
    with web.daemon.unix() as client:
        answered = client.post(
            f"/sessions/{record['session_key']}/permission",
            json={"option": "reject", "reason": "from a script"},
        )
    assert answered.status_code == 200, answered.text
    page.wait_for_selector(bar, state="detached")
    page.wait_for_selector(f"{row(held.pane)} .request", state="detached")
    assert held.decision() == {"behavior": "deny", "message": "from a script"}


def test_always_allow_from_the_bar_over_the_terminal(page: Any, web: Web, gated: Any) -> None:
    held = gated(payload(always=True))
    log_in(page, web)
    page.click(f"{row(held.pane)} .name")  # the row's request box answers, its name opens
    bar = f'.view[data-pane="{held.pane}"] .request-bar .request'
    page.wait_for_selector(bar)
    assert page.locator(f"{bar} button").all_inner_texts() == ["Allow", "Always allow", "Deny"]
    page.click(f'{bar} button[data-answer="allow_always"]')
    assert held.decision() == {"behavior": "allow", "updatedPermissions": [SUGGESTED]}
    page.wait_for_selector(bar, state="detached")


def test_on_a_phone_the_card_answers(page: Any, web: Web, gated: Any) -> None:
    held = gated(payload(command="rm -rf build"))
    page.set_viewport_size({"width": 390, "height": 760})
    page.goto(web.new_link())
    card = f'.card[data-pane="{held.pane}"] .request'
    page.wait_for_selector(card)
    assert page.locator(f"{card} .summary").inner_text() == "Bash: rm -rf build"
    page.click(f'{card} button[data-answer="reject"]')
    assert held.decision() == {"behavior": "deny", "message": "denied from rosterd"}
    page.wait_for_selector(card, state="detached")
    assert page.locator("#keys").is_hidden()  # still the deck: the card was not opened


def test_a_request_only_the_terminal_can_answer_offers_the_terminal(
    page: Any, web: Web, roost: Roost
) -> None:
    pane = roost.start("sh")
    here = {"TMUX": f"{roost.socket},1,0", "TMUX_PANE": pane}  # as if typed in the pane
    proc = roost.run("state", "blocked", "Bash: touch x", env=here)
    assert proc.returncode == 0, proc.stderr
    log_in(page, web)
    request = f"{row(pane)} .request"
    page.wait_for_selector(request)
    assert page.locator(f"{request} .summary").inner_text() == "Bash: touch x"
    assert page.locator(f"{request} button").all_inner_texts() == ["Answer in the terminal"]
    page.click(f'{request} button[data-answer="terminal"]')
    page.wait_for_selector(f'.tab[data-pane="{pane}"][aria-selected="true"]')
    bar = f'.view[data-pane="{pane}"] .request-bar .request'
    page.wait_for_selector(bar)
    assert page.locator(f"{bar} .hint").inner_text() == "answer it in the terminal"


def test_a_notifications_allow_action_answers_the_request(page: Any, web: Web, gated: Any) -> None:
    held = gated(payload())
    record = held.record()
    key, request_id = record["session_key"], record["pending"]["id"]
    page.context.grant_permissions(["notifications"], origin=web.origin)
    log_in(page, web)
    assert page.evaluate("() => navigator.serviceWorker.ready.then(() => true)")
    worker = next(w for w in page.context.service_workers if w.url == f"{web.origin}/sw.js")
    worker.evaluate(
        """async ([key, request]) => {
            await self.registration.showNotification("Roost", {
                tag: key, data: { key, request }, actions: [{ action: "allow", title: "Allow" }],
            });
            const [shown] = await self.registration.getNotifications({ tag: key });
            const click = { notification: shown, action: "allow" };
            self.dispatchEvent(new NotificationEvent("notificationclick", click));
        }""",
        [key, request_id],
    )
    assert held.decision() == {"behavior": "allow"}
    page.wait_for_selector(f"{row(held.pane)} .request", state="detached")


@pytest.mark.parametrize("viewport", [{"width": 1200, "height": 760}, {"width": 390, "height": 760}])
def test_a_claude_request_while_its_gate_is_off_says_the_command_that_turns_it_on(
    page: Any, web: Web, roost: Roost, viewport: dict[str, int]
) -> None:
    roost.env["XDG_RUNTIME_DIR"] = str(web.daemon.runtime)  # the pane's hooks find the daemon
    agent = roost.fake_agent("--start-hook", "--dialog-on", "ASK")
    pane = roost.start(f"ROOST_AGENT=claude exec {agent}")
    roost.wait_screen(pane, "fake agent ready")
    roost.tmux("send-keys", "-t", pane, "ASK", "Enter")
    web.daemon.wait_for(
        lambda: web.daemon.record_where(
            lambda r: (r.get("tmux") or {}).get("pane") == pane and r["activity"] == "needs_attention"
        ),
        what="the dialog's request",
    )
    page.set_viewport_size(viewport)
    page.goto(web.new_link())
    phone = viewport["width"] < 700
    where = f'.card[data-pane="{pane}"]' if phone else row(pane)
    request = f"{where} .request"
    page.wait_for_selector(f"{request} .gate-off")
    assert page.locator(f"{request} button").all_inner_texts() == ["Answer in the terminal"]
    turn_on = "rosterd integrate install claude --gate"
    assert (
        page.locator(f"{request} .gate-off").inner_text()
        == f"To answer from here, turn its gate on: {turn_on}"
    )
    assert page.locator(f"{request} .gate-off code").inner_text() == turn_on
    line = None
    for _ in range(100):  # a change on the stream may draw the row again: None while it is redrawn
        if (line := page.locator(f"{request} .gate-off").bounding_box()) is not None:
            break
        page.wait_for_timeout(50)
    assert line is not None and line["height"] < 40, line  # one line (two at most on a phone)
    page.click(f'{request} button[data-answer="terminal"]')
    bar = f'.view[data-pane="{pane}"] .request-bar .request'
    page.wait_for_selector(f"{bar} .gate-off code")

    installed = subprocess.run(
        [str(BIN / "rosterd"), *turn_on.split()[1:]], env=web.daemon.env, capture_output=True, text=True
    )
    assert installed.returncode == 0, installed.stderr
    page.goto(web.new_link())  # the gate is on now: this request was never held, nothing to turn on
    page.wait_for_selector(request)
    assert page.locator(f"{request} .gate-off").count() == 0
