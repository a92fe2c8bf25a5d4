"""What sessions cost, in the web app in Debian's Chromium: each session's spend beside its name,
its folder's sum beside the folder's rollup, a budget that holds a session with the button that
lifts it, and the Cost dialog's chart of the last two weeks, a bar a day.

The sessions are the runner's fake ACP adapter's (``tests/runner/conftest.py``), whose
``SPEND X`` prompt costs X dollars: what the page shows is checked against what was spent.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.cli.rosterd.helpers import ok
from tests.conftest import Roost
from tests.runner.conftest import Headless, headless
from tests.web.conftest import Web, watched_page
from tests.web.test_browser import log_in

__all__ = ["headless"]


@pytest.fixture
def site(headless: Headless, roost: Roost) -> Web:
    """The runner's daemon, with budgets warning at half their limit."""
    headless.daemon.settings["budget"] = {"warn": 0.5}
    headless.daemon.start()
    return Web(headless.daemon, roost)


@pytest.fixture
def tolerant(chromium: Any) -> Iterator[Any]:
    """A page whose console may report the refusal a test provokes on purpose, and nothing else."""
    yield from watched_page(chromium, ("409 (Conflict)",))


def row(key: str) -> str:
    return f'li.session[data-session="{key}"]'


def spend(headless: Headless, key: str, amount: float, total: float | None = None) -> None:
    """A turn that costs ``amount``, once the session's record says it has spent ``total``."""
    assert headless.prompt(key, f"SPEND {amount}", wait="idle").status_code == 200
    expected = {"USD": amount if total is None else total}
    headless.daemon.wait_for(
        lambda: (headless.record(key).get("spend") or {}).get("cost") == expected,
        what=f"{key} to have spent {expected}",
    )


def text_of(page: Any, selector: str) -> str:
    return page.locator(selector).inner_text()


def test_each_session_and_its_folder_show_what_they_cost(page: Any, site: Web, headless: Headless) -> None:
    folder = str(site.roost.root)
    first = headless.start(name="tests: first", cwd=folder)["session_key"]
    second = headless.start(name="tests: second", cwd=folder)["session_key"]
    idle = headless.start(name="tests: idle", cwd=folder)["session_key"]
    spend(headless, first, 0.25)
    spend(headless, second, 1.5)
    log_in(page, site)
    page.wait_for_selector(f"{row(second)} .cost")
    assert text_of(page, f"{row(first)} .cost") == "0.25 USD"
    assert text_of(page, f"{row(second)} .cost") == "1.50 USD"
    assert page.locator(f"{row(idle)} .cost").count() == 0  # nothing counted: nothing said
    section = f'section.folder[data-cwd="{folder}"]'
    assert text_of(page, f"{section} h2 .folder-cost") == "1.75 USD"
    spend(headless, first, 0.25, total=0.5)
    page.wait_for_function(
        "s => document.querySelector(s)?.textContent === '2.00 USD'", arg=f"{section} h2 .folder-cost"
    )

    page.set_viewport_size({"width": 390, "height": 844})  # a phone: the deck of cards
    card = f'article.card[data-session="{second}"]'
    page.wait_for_selector(f"{card} .cost")
    assert text_of(page, f"{card} .cost") == "1.50 USD"
    assert text_of(page, f'section.card-folder[data-cwd="{folder}"] h2 .folder-cost') == "2.00 USD"


def test_a_budget_holds_a_session_on_the_page_until_the_person_lifts_it_there(
    tolerant: Any, site: Web, headless: Headless
) -> None:
    page = tolerant
    key = headless.start(name="tests: held", cwd=str(site.roost.root))["session_key"]
    ok(headless.daemon, "budget", "set", "session", key, "1")
    log_in(page, site)
    spend(headless, key, 0.6)
    near = page.wait_for_selector(f'{row(key)} .budget[data-state="warning"]')
    assert near.inner_text().startswith("near budget")
    assert "0.60 USD of 1.00 USD" in (near.get_attribute("title") or "")

    spend(headless, key, 1.2, total=1.8)
    held = page.wait_for_selector(f'{row(key)} .budget[data-state="exceeded"]')
    assert held.inner_text().startswith("over budget")
    assert headless.prompt(key, "hello").status_code == 409
    page.click(f"{row(key)} .budget .lift")
    headless.daemon.wait_for(lambda: headless.record(key)["budget"]["state"] == "lifted", what="the lift")
    page.wait_for_function("s => !document.querySelector(s)", arg=f"{row(key)} .budget")
    assert page.locator("#tabs .tab").count() == 0  # the click lifted; it opened nothing
    assert headless.prompt(key, "hello", wait="idle").status_code == 200


def test_the_cost_dialog_draws_the_last_two_weeks_a_bar_a_day(
    page: Any, site: Web, headless: Headless
) -> None:
    key = headless.start(name="tests: charted", cwd=str(site.roost.root))["session_key"]
    log_in(page, site)
    page.click("#sidebar .open-cost")
    page.wait_for_selector("dialog#cost[open] .cost-total")
    assert text_of(page, "dialog#cost .cost-total") == "Nothing counted in the last two weeks."
    page.click("dialog#cost .close")

    spend(headless, key, 0.75)
    page.click("#sidebar .open-cost")
    page.wait_for_function(
        "() => document.querySelector('dialog#cost .cost-total')?.textContent.startsWith('0.75 USD')"
    )
    assert text_of(page, "dialog#cost .cost-total") == "0.75 USD in 1 turn"
    bars = page.locator("dialog#cost .cost-chart rect")
    assert bars.count() == 14
    today = time.strftime("%Y-%m-%d", time.gmtime())
    assert bars.nth(13).get_attribute("data-day") == today
    assert float(bars.nth(13).get_attribute("height") or 0) == 60  # the tallest bar is today's
    assert all(float(bars.nth(i).get_attribute("height") or 0) == 0 for i in range(13))
    assert page.locator("dialog#cost .cost-chart rect title").nth(13).text_content() == f"{today}: 0.75 USD"
