"""In-browser notifications (notify.js) in Debian's Chromium against a real daemon and tmux.

Two tabs of one browser profile see the same change stream; a background transition must
still make exactly one toast between them, and bump the unseen count in both titles.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.web.conftest import Web

pytestmark = pytest.mark.browser


def row(pane: str) -> str:
    return f'li.session[data-pane="{pane}"]'


def toasts(*pages: Any) -> int:
    return sum(page.locator(".toast").count() for page in pages)


def wait_title(page: Any, title: str) -> None:
    page.wait_for_function("title => document.title === title", arg=title, timeout=5000)


def set_state(web: Web, pane: str, word: str, *reason: str) -> None:
    inside = {"TMUX": f"{web.roost.socket},1,0", "TMUX_PANE": pane}
    proc = web.roost.run("state", word, *reason, env=inside)
    assert proc.returncode == 0, proc.stderr


def test_two_tabs_make_one_toast_and_opening_clears_the_count(page: Any, web: Web) -> None:
    pane = web.roost.start()
    page.goto(web.new_link())
    other = page.context.new_page()
    other.goto(f"{web.origin}/")
    for tab in (page, other):
        tab.wait_for_selector(row(pane))
        assert tab.title() == "Roost"
    assert page.evaluate("localStorage.getItem('roost-notify-sound')") is None  # sound is off by default
    set_state(web, pane, "working")
    for tab in (page, other):
        tab.wait_for_selector(f'{row(pane)} .badge[data-state="working"]', timeout=5000)
    assert toasts(page, other) == 0  # idle -> working is nothing to tell
    set_state(web, pane, "blocked")
    for tab in (page, other):
        tab.wait_for_selector(f'{row(pane)} .badge[data-state="blocked"]', timeout=5000)
        wait_title(tab, "(1) Roost")
    deadline = time.monotonic() + 5
    while toasts(page, other) == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    settle = time.monotonic() + 1
    while time.monotonic() < settle:
        assert toasts(page, other) <= 1, "both tabs made a toast"
        time.sleep(0.05)
    assert toasts(page, other) == 1
    shown = page.locator(".toast") if page.locator(".toast").count() else other.locator(".toast")
    assert shown.inner_text().endswith("needs input")
    assert shown.get_attribute("data-pane") == pane
    page.click(row(pane))
    page.wait_for_selector(f'.view[data-pane="{pane}"]')
    for tab in (page, other):
        wait_title(tab, "Roost")
    other.close()


def test_the_session_in_view_makes_no_toast(page: Any, web: Web) -> None:
    pane = web.roost.start()
    page.goto(web.new_link())
    page.wait_for_selector(row(pane))
    page.click(row(pane))
    page.wait_for_selector(f'.view[data-pane="{pane}"][data-state="open"]')
    set_state(web, pane, "working")
    page.wait_for_selector(f'{row(pane)} .badge[data-state="working"]', timeout=5000)
    set_state(web, pane, "done")
    page.wait_for_selector(f'{row(pane)} .badge[data-state="idle"]', timeout=5000)
    time.sleep(0.5)
    assert page.locator(".toast").count() == 0
    assert page.title() == "Roost"


def test_a_background_session_finishing_says_done(page: Any, web: Web) -> None:
    first = web.roost.start()
    second = web.roost.window("other", "sh")
    page.goto(web.new_link())
    page.wait_for_selector(row(second))
    page.click(row(first))
    set_state(web, second, "working")
    page.wait_for_selector(f'{row(second)} .badge[data-state="working"]', timeout=5000)
    set_state(web, second, "done")
    page.wait_for_selector(f'.toast[data-pane="{second}"][data-what="done"]', timeout=5000)
    assert page.locator(f'.toast[data-pane="{second}"]').inner_text() == "other: done"
    assert page.locator(f"{row(second)} .badge").inner_text() == "done"  # until the person looks
    wait_title(page, "(1) Roost")
    page.click(f'.toast[data-pane="{second}"]')
    page.wait_for_selector(f'.tab[data-pane="{second}"][aria-selected="true"]')
    wait_title(page, "Roost")
    page.wait_for_selector(f'{row(second)} .badge[data-state="idle"]')
    assert page.locator(f"{row(second)} .badge").inner_text() == "idle"  # seen


def test_a_session_seen_idle_then_blocked_says_needs_input(page: Any, web: Web) -> None:
    """The page may hear a turn's start and its permission request in one batch (another node's
    changes come through the union): seen idle, then blocked, it still needs the person."""
    first = web.roost.start()
    second = web.roost.window("other", "sh")
    page.goto(web.new_link())
    page.wait_for_selector(row(second))
    page.click(row(first))
    set_state(web, second, "idle")
    page.wait_for_selector(f'{row(second)} .badge[data-state="idle"]', timeout=5000)
    set_state(web, second, "blocked")
    page.wait_for_selector(f'.toast[data-pane="{second}"][data-what="needs input"]', timeout=5000)
    wait_title(page, "(1) Roost")


def test_the_page_says_the_state_the_pane_badge_says(page: Any, web: Web) -> None:
    """The record's state decides, as for ``roost status``: a turn that ends idle (a declined
    dialog does) reads idle, not done; a done whose turn's end the daemon never saw (a badge
    done before it started) reads done until the person opens the session here, like any done."""
    first = web.roost.start()
    second = web.roost.window("other", "sh")
    page.goto(web.new_link())
    page.wait_for_selector(row(second))
    page.click(row(first))  # the person looks elsewhere
    badge = f"{row(second)} .badge"
    set_state(web, second, "done")
    page.wait_for_selector(f'{badge}[data-state="done"]', timeout=5000)
    page.click(row(second))
    page.wait_for_selector(f'{badge}[data-state="idle"]', timeout=5000)
    assert web.roost.option(second, "@roost-state") == "done"  # a look from the page is no look in tmux
    page.click(row(first))
    set_state(web, second, "working")
    page.wait_for_selector(f'{badge}[data-state="working"]', timeout=5000)
    set_state(web, second, "idle")
    page.wait_for_selector(f'{badge}[data-state="idle"]', timeout=5000)
    assert web.roost.option(second, "@roost-state") == "idle"


@pytest.mark.parametrize("width", [1200, 390])
def test_every_state_reads_in_one_set_of_words(page: Any, web: Web, width: int) -> None:
    """working, needs input, error, done, idle: on badges, rollups and toasts, at a desktop's
    and a phone's size, whatever word rosterd's activity uses."""
    watched = web.roost.start()
    pane = web.roost.window("worker", "sh")
    page.set_viewport_size({"width": width, "height": 760})
    page.goto(web.new_link())
    phone = width < 700
    where = f'.card[data-pane="{pane}"]' if phone else row(pane)
    page.wait_for_selector(where)
    if not phone:
        page.click(row(watched))  # the person looks elsewhere: the worker is in the background
    words = []
    for word, reason, shown in (
        ("working", (), "working"),
        ("blocked", ("Bash: touch x",), "needs input"),
        ("working", (), "working"),
        ("error", ("API Error: 400",), "error"),
        ("working", (), "working"),
        ("done", (), "done"),
    ):
        set_state(web, pane, word, *reason)
        page.wait_for_function(
            "([where, shown]) => document.querySelector(`${where} .badge`)?.textContent === shown",
            arg=[where, shown],
            timeout=5000,
        )
        words.append(page.locator(f"{where} .badge").inner_text())
    assert words == ["working", "needs input", "working", "error", "working", "done"]
    rollup = page.locator(f"{where} >> xpath=ancestor::section[1]//span[@class='rollup']").inner_text()
    assert "1 done" in rollup, rollup
    for what in ("needs input", "error", "done"):
        page.wait_for_selector(f'.toast[data-pane="{pane}"][data-what="{what}"]', state="attached")
    assert page.locator(f'.toast[data-pane="{pane}"][data-what="error"]').inner_text() == "worker: error"
    page.click(f"{where} .name")  # the person opens it: a finished turn seen is idle
    page.wait_for_selector(
        '#phone-title .badge[data-state="idle"]' if phone else f'{where} .badge[data-state="idle"]'
    )
    if phone:
        page.click("#back")
    assert page.locator(f"{where} .badge").inner_text() == "idle"
