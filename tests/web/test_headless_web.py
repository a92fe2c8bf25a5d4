"""Headless sessions in the web app: started from the launcher, shown beside the terminals,
prompted, answered, suspended, resumed and stopped, in Debian's Chromium.

The daemon is the runner's (``tests/runner/conftest.py``): its harness ``fake`` is the fake ACP
adapter (``tests/fakes/acp_adapter.py``), whose prompt words script each turn. Its fixture ends
every holder a test leaves, so the leak guard sees none.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Roost
from tests.runner.conftest import Headless, headless
from tests.web.conftest import Web, watched_page
from tests.web.test_browser import log_in

__all__ = ["headless"]

EVIL = '<img src=x onerror="window.pwned = 1">'


@pytest.fixture
def site(headless: Headless, roost: Roost) -> Web:
    """The runner's daemon, started, beside a tmux server with one shell (a terminal row)."""
    headless.daemon.start()
    roost.start()
    return Web(headless.daemon, roost)


@pytest.fixture
def tolerant(chromium: Any) -> Iterator[Any]:
    """A page whose console may report the refusals a test provokes on purpose, and nothing else."""
    yield from watched_page(chromium, ("409 (Conflict)", "400 (Bad Request)"))


def panel(key: str) -> str:
    return f'.headless[data-session="{key}"]'


def launch_headless(page: Any, folder: Path, name: str) -> str:
    """Start a ``fake`` session from the launcher; its session key, from its sidebar row."""
    page.click("#sidebar .new-session")
    page.wait_for_selector('dialog#launcher[open] .choice[data-agent="claude"]')
    page.check('input[name="lane"][value="headless"]')
    assert page.locator(".choice.custom").is_hidden()
    assert page.locator("#launch-policy").is_visible()
    page.check('.choice[data-agent="fake"] input')
    page.fill("#launch-cwd", str(folder))
    page.fill("#launch-name", name)
    page.select_option("#launch-policy", "attention")
    page.click("#launch-go")
    row = page.wait_for_selector(f'li.session[data-session]:has-text("{name}")')
    key = row.get_attribute("data-session")
    assert key
    return key


def send(page: Any, key: str, text: str) -> None:
    page.fill(f"{panel(key)} textarea", text)
    page.click(f"{panel(key)} .prompt button")


def test_the_listing_says_which_harnesses_run_headless(site: Web) -> None:
    with site.client() as client:
        doc = client.get("/launcher", headers=site.cookie_header()).json()
    assert "fake" in doc["headless"] and "claude" in doc["headless"]
    assert "fake" not in {agent["name"] for agent in doc["agents"]}  # a harness no manifest describes
    for agent in doc["agents"]:
        assert agent["headless"] is (agent["name"] in doc["headless"]), agent


def test_a_headless_session_from_the_launcher_to_its_stop(
    page: Any, site: Web, headless: Headless, tmp_path: Path
) -> None:
    log_in(page, site)
    key = launch_headless(page, tmp_path, "relay")
    view = panel(key)
    page.wait_for_selector(f'{view}[data-activity="idle"][data-liveness="live"]')
    assert page.locator(f'.view[data-session="{key}"] .xterm').count() == 0  # no terminal for it
    assert page.locator(f'.tab[data-session="{key}"]').get_attribute("aria-selected") == "true"
    assert page.locator(f'li.session[data-session="{key}"]').get_attribute("data-state") == "idle"
    assert page.locator("li.session[data-pane]").count() == 1  # the shell, beside it
    assert page.locator(f"{view} .badge").inner_text() == "idle"  # no turn has ended yet
    assert "policy attention" in page.locator(f"{view} .facts").inner_text()
    assert page.locator(f'{view} [data-action="cancel"]').is_hidden()
    assert page.locator(f'{view} [data-action="resume"]').is_hidden()

    send(page, key, "PLAN")
    page.wait_for_selector(f'{view} .recap pre:text-is("planned")')
    page.wait_for_selector(f'{view}[data-activity="idle"]')
    steps = page.locator(f"{view} .plan li")
    assert steps.count() == 2
    assert steps.nth(0).get_attribute("data-status") == "completed"
    assert steps.nth(1).get_attribute("data-status") == "in_progress"
    assert steps.nth(0).locator(".content").inner_text() == "read the tests"
    assert steps.nth(1).inner_text().split("\n")[0].startswith("fix the relay")
    facts = page.locator(f"{view} .facts").inner_text()
    assert "mode plan" in facts and "context 1,200 / 200,000" in facts and "8 tokens" in facts
    assert page.locator(f"{view} textarea").input_value() == ""

    send(page, key, "PERMIT")
    pending = f'{view}[data-activity="needs_attention"] .pending'
    page.wait_for_selector(pending)
    assert page.locator(f"{pending} .tool").inner_text() == "Bash"
    assert page.locator(f"{pending} .summary").inner_text() == "rm -rf build"
    assert page.locator(f"{pending} .choices button").all_inner_texts() == ["Allow", "Always allow", "Deny"]
    assert page.locator(f'li.session[data-session="{key}"] .badge').inner_text() == "needs input"
    on_row = f'li.session[data-session="{key}"] .request'
    assert page.locator(f"{on_row} .choices button").all_inner_texts() == ["Allow", "Always allow", "Deny"]
    page.click(f'{pending} button[data-answer="allow"]')
    page.wait_for_selector(f'{view} .recap pre:text-is("tool completed (allow)")')
    page.wait_for_selector(f'{view}[data-activity="idle"]')
    assert page.locator(f"{view} .pending").is_hidden()
    assert page.locator(on_row).count() == 0  # the row's request left with it

    page.click(f'{view} [data-action="suspend"]')
    page.wait_for_selector(f'{view}[data-liveness="suspended"]')
    assert headless.record(key)["liveness"] == "suspended"
    assert page.locator(f'{view} [data-action="suspend"]').is_hidden()
    page.wait_for_selector(f'li.session[data-session="{key}"] .detail:has-text("suspended")')
    page.click(f'{view} [data-action="resume"]')
    page.wait_for_selector(f'{view}[data-liveness="live"]')
    assert headless.record(key)["liveness"] == "live"
    assert page.locator(f'{view} [data-action="resume"]').is_hidden()

    page.click(f'{view} [data-action="stop"]')
    page.wait_for_selector(f'{view}[data-liveness="ended"]')
    page.wait_for_selector(f'li.session[data-session="{key}"]', state="detached")
    assert page.locator(f'.tab[data-session="{key}"]').get_attribute("data-view") == "closed"
    assert page.locator(f"{view} textarea").is_disabled()
    assert page.locator(f'{view} [data-action="stop"]').is_hidden()
    assert headless.record(key)["liveness"] == "ended"
    assert headless.holder_pids() == []


def test_agent_text_is_shown_as_text(page: Any, site: Web, headless: Headless) -> None:
    log_in(page, site)
    key = headless.start(name="<b>bold</b> name")["session_key"]
    page.click(f'li.session[data-session="{key}"]')
    view = panel(key)
    page.wait_for_selector(f'{view}[data-activity="idle"]')
    send(page, key, EVIL)
    page.wait_for_selector(f"{view} .recap pre:not(:empty)")
    assert page.locator(f"{view} .recap pre").inner_text() == f"echo: {EVIL}"
    assert page.locator(f"{view} .name").inner_text() == "<b>bold</b> name"
    assert page.locator("#views img, #views b, #sessions b").count() == 0
    assert page.evaluate("window.pwned") is None
    headless.post(f"/sessions/{key}/stop")


def test_cancel_ends_a_running_turn_and_refusals_are_shown(
    tolerant: Any, site: Web, headless: Headless
) -> None:
    page = tolerant
    log_in(page, site)
    key = headless.start(name="slow")["session_key"]
    page.click(f'li.session[data-session="{key}"]')
    view = panel(key)
    send(page, key, "SLOW 30")
    page.wait_for_selector(f'{view}[data-activity="active"] [data-action="cancel"]')
    send(page, key, "while it works")
    page.wait_for_selector(f"{view} .error:has-text('the session is mid-turn')")
    assert page.locator(f"{view} textarea").input_value() == "while it works"  # kept for another try
    page.click(f'{view} [data-action="cancel"]')
    page.wait_for_selector(f'{view}[data-activity="idle"]')
    assert page.locator(f"{view} .error").inner_text() == ""
    assert headless.record(key)["activity_event"] == "cancelled"
    headless.post(f"/sessions/{key}/stop")


def test_the_launcher_shows_the_runners_refusal(tolerant: Any, site: Web) -> None:
    page = tolerant
    log_in(page, site)
    page.click("#sidebar .new-session")
    page.wait_for_selector('dialog#launcher[open] .choice[data-agent="claude"]')
    page.check('input[name="lane"][value="headless"]')
    page.click("#launch-go")
    page.wait_for_selector("#launch-error:text-is('pick an agent')")
    page.check('.choice[data-agent="fake"] input')
    page.fill("#launch-cwd", "relative/folder")
    page.click("#launch-go")
    page.wait_for_selector("#launch-error:has-text('absolute')")
    assert page.locator("dialog#launcher").get_attribute("open") is not None
    assert page.locator("li.session[data-session]").count() == 0


def test_on_a_phone_its_card_shows_the_last_reply_and_opens_without_the_key_row(
    page: Any, site: Web, headless: Headless
) -> None:
    key = headless.start(name="phone")["session_key"]
    assert headless.prompt(key, "hello\nthere", wait="idle").status_code == 200
    page.set_viewport_size({"width": 390, "height": 760})
    page.goto(site.new_link())
    card = f'.card[data-session="{key}"]'
    page.wait_for_selector(f"{card} .tail:not(:empty)")
    assert page.locator(f"{card} .tail").inner_text() == "echo: hello\nthere"
    page.click(card)
    page.wait_for_selector(f'{panel(key)}[data-activity="idle"]')
    assert page.locator("#keys").is_hidden()
    assert page.locator("#phone-title").inner_text().startswith("phone")
    headless.post(f"/sessions/{key}/stop")
