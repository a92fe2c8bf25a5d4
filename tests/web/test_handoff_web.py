"""A headless session's panel hands it off to another node of the swarm and says where it went,
in Debian's Chromium.

The two nodes are tests/mesh/test_nodes_handoff.py's (real daemons in namespaces, the fake ACP
adapter keeping its history under each node's HOME). A node's web app is on its own loopback, so
the browser runs inside node A's network namespace, as a person at that machine's browser.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.mesh.swarmnodes import SwarmNode
from tests.mesh.test_nodes_handoff import pair, record, start, turn
from tests.web.conftest import chromium_in

__all__ = ["pair"]

pytestmark = [pytest.mark.browser, pytest.mark.alone]


@pytest.fixture
def browser_on_a(pair: tuple[SwarmNode, SwarmNode, Path], tmp_path: Path) -> Iterator[Any]:
    """Chromium in node A's network namespace (Playwright drives it over its pipes)."""
    with chromium_in(pair[0].node.namespace, tmp_path) as browser:
        yield browser


def test_hand_off_to_lists_the_reachable_nodes_and_the_panel_says_where_it_went(
    pair: tuple[SwarmNode, SwarmNode, Path], browser_on_a: Any
) -> None:
    a, b, project = pair
    key = start(a, project)
    turn(a, key, "the words before")
    a.wait_for(lambda: any(n["reachable"] for n in a.nodes()["nodes"] if not n["self"]), "A to reach B")
    link = a.post("/login-link").json()["url"]
    page = browser_on_a.new_context(viewport={"width": 1200, "height": 760}).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(link)
    page.click(f'li.session[data-session="{key}"]')
    panel = f'.headless[data-session="{key}"]'
    page.click(f'{panel} button[data-action="handoff"]')
    offered = page.locator(f"{panel} .nodes button[data-node]")
    offered.first.wait_for()
    assert offered.all_inner_texts() == ["n2"]  # the one other member, and never this node
    page.click(f'{panel} .nodes button[data-node="n2"]')
    page.wait_for_selector(f'{panel}[data-liveness="ended"]', timeout=30_000)
    ended = record(a, key)
    there = ended["handed_to"]["session_key"]
    assert page.locator(f"{panel} .handed").inner_text() == f"Handed off to n2 as {there}"
    assert page.locator(f'{panel} button[data-action="handoff"]').is_hidden()
    assert turn(b, there, "HISTORY")["recap"] == "history: 1 turns; last: the words before"
    assert not errors, errors
