"""The web app's Fork, in Debian's Chromium: the ⑂ on a session's tab asks for a name (and a
worktree), forks the session through ``POST …/fork`` and opens the fork in a tab of its own; a
refusal is shown in rosterd's words and starts nothing.

A headless session is the runner's fake ACP adapter (``tests/runner/conftest.py``); a terminal's
agent is ``tests/cli/roost/test_fork.py``'s fake harness with a ``[fork]`` command.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.cli.roost.test_fork import Fakes, fakes, status_of
from tests.conftest import Roost
from tests.runner.conftest import Headless, headless, sessions
from tests.web.conftest import Web, watched_page
from tests.web.test_browser import log_in

__all__ = ["fakes", "headless"]


@pytest.fixture
def site(fakes: Fakes, headless: Headless, roost: Roost) -> Web:
    """The runner's daemon, started after the fake harnesses are on the sandbox's PATH."""
    headless.daemon.start()
    return Web(headless.daemon, roost)


@pytest.fixture
def tolerant(chromium: Any) -> Iterator[Any]:
    """A page whose console may report the refusal a test provokes on purpose, and nothing else."""
    yield from watched_page(chromium, ("400 (Bad Request)",))


def fork_from_tab(page: Any, tab: str, name: str, *, worktree: bool = False) -> None:
    page.click(f"{tab} button.fork")
    page.wait_for_selector("dialog#fork[open]")
    page.fill("#fork-name", name)
    if worktree:
        page.check("#fork-worktree")
        assert page.locator("#fork-branch").is_visible()
    page.click("#fork-go")


def test_a_headless_session_is_forked_from_its_tab_and_the_fork_opens(
    tolerant: Any, site: Web, headless: Headless
) -> None:
    page = tolerant
    key = headless.start(name="source", cwd=str(site.roost.root))["session_key"]
    assert headless.prompt(key, "remember the heron", wait="idle").status_code == 200
    log_in(page, site)
    page.click(f'li.session[data-session="{key}"]')
    tab = f'.tab[data-session="{key}"]'
    page.wait_for_selector(f"{tab} button.fork")
    assert page.locator("#fork-source").inner_text() == ""

    fork_from_tab(page, tab, "idea-b", worktree=True)
    page.wait_for_selector("#fork-error:has-text('git repository')")
    assert page.locator("dialog#fork").get_attribute("open") is not None
    assert [r["session_key"] for r in sessions(headless)] == [key]

    page.uncheck("#fork-worktree")
    page.click("#fork-go")
    page.wait_for_selector("dialog#fork", state="hidden")
    [fork] = [r for r in sessions(headless) if r["session_key"] != key]
    assert fork["name"] == "idea-b"
    new_tab = f'.tab[data-session="{fork["session_key"]}"]'
    page.wait_for_selector(f'{new_tab}[aria-selected="true"]')
    page.wait_for_selector(f'.headless[data-session="{fork["session_key"]}"]')
    answer = headless.prompt(fork["session_key"], "HISTORY", wait="idle")
    assert answer.json()["record"]["recap"] == "history: 1 turns; last: remember the heron"


def test_a_terminals_agent_is_forked_from_its_tab_into_a_window_beside_it(
    page: Any, site: Web, fakes: Fakes, roost: Roost
) -> None:
    source = fakes.start("forkable", roost.root, "--model", "m1")
    fakes.talk()
    log_in(page, site)
    page.click(f'li.session[data-pane="{source}"]')
    tab = f'.tab[data-pane="{source}"]'
    page.wait_for_selector(f"{tab} button.fork")
    assert page.locator(f"{tab} button.fork").get_attribute("title").startswith("Fork")

    fork_from_tab(page, tab, "idea-b")

    page.wait_for_selector("dialog#fork", state="hidden")
    roost.wait_for(lambda: len(fakes.lines()) == 2, what="the fork's start")
    [pane] = [p for p in roost.tmux("list-panes", "-a", "-F", "#{pane_id}").split() if p != source]
    page.wait_for_selector(f'.tab[data-pane="{pane}"][aria-selected="true"]')
    page.wait_for_selector(f'.view[data-pane="{pane}"] .xterm-rows')
    forked = status_of(roost, pane)
    assert (forked["name"], forked["harness"]) == ("idea-b", "forkable")
    assert fakes.lines()[1].startswith(f"argv=--fork conv-1 --session-id {forked['session_id']} --model m1")
