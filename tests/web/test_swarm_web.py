"""The web app in a swarm: Chromium logged into one node (it runs in that node's network
namespace, where the node's loopback listener is) shows every node's sessions grouped by node
with its health, answers another node's permission request, notifies for it, opens its pane's
terminal through the node it is logged into, and dims a node behind a pulled cable with its
age. Real daemons on real namespaces (tests/nodes.py), a real headless session over the fake
ACP adapter and a fake agent TUI in a real tmux pane, both on the other node."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.mesh.swarmnodes import SwarmNode
from tests.mesh.test_nodes_acts import _pair
from tests.mesh.unionnodes import launched, snapshot
from tests.nodes import Network
from tests.web.conftest import chromium_in

pytestmark = pytest.mark.browser

WAIT_MS = 20_000
LOST_MS = 30_000
"""A pulled cable is found out within 15 s; the page shows it with the next union frame."""


@dataclass
class Swarm:
    owner: SwarmNode  # n1: runs the sessions
    here: SwarmNode  # n2: the node the browser is logged into
    root: Path
    log: Path  # what the fake ACP adapter was sent

    def start(self, name: str) -> str:
        """A headless session on the owner that asks before its tool runs; its key."""
        answer = self.owner.post(
            "/sessions", {"harness": "fake", "cwd": str(self.root), "policy": "attention", "name": name}
        )
        assert answer.status_code == 201, answer.text
        return str(answer.json()["record"]["session_key"])

    def pane(self, name: str, keys: Path, named: bool = True) -> str:
        """The fake agent TUI in a new window ``name`` of the owner's tmux server (its session
        given that name too; unless ``named`` is False, when it has no hooks either, so only the
        pane is named); its row's id once the node the browser is on holds it: ``NODE_ID/%N``,
        another node's terminal."""
        record = launched(self.owner, self.root, keys, name, hook=named)
        key = str(record["session_key"])
        if named:
            answer = self.owner.post(f"/sessions/{key}/name", {"name": name})
            assert answer.status_code == 200, answer.text
        self.here.wait_for(
            lambda: any(r["session_key"] == key for r in snapshot(self.here)["records"]), "n2 holds it"
        )
        return f"{record['node_id']}/{record['tmux']['pane']}"

    def shell(self, name: str, said: str) -> str:
        """A plain shell in a new window ``name`` of the owner's tmux server, which no roster
        holds, having printed ``said``; its row's id once the node the browser is on has been
        told of its pane."""
        command = f"sh -c 'echo {said}; exec sh'"
        answer = self.owner.post("/launch", {"command": command, "cwd": str(self.root), "name": name})
        assert answer.status_code == 201, answer.text
        pane = answer.json()["pane"]
        node_id = self.owner.identity().node_id

        def told() -> bool:
            rows = {row["node_id"]: row for row in snapshot(self.here)["nodes"]}
            return any(t["pane"] == pane for t in rows[node_id]["terminals"] or ())

        self.here.wait_for(told, "n2 is told of n1's shell")
        assert not [r for r in snapshot(self.here)["records"] if (r.get("tmux") or {}).get("pane") == pane]
        return f"{node_id}/{pane}"


@pytest.fixture
def pair(network: Network) -> Iterator[Swarm]:
    """Two joined nodes; n1 runs headless sessions over the fake adapter. Their homes are under
    a short path: a holder's socket path must fit in ``sun_path``."""
    with tempfile.TemporaryDirectory(prefix="rw", dir="/tmp") as short:
        root = Path(short)
        for a, b, log in _pair(network, root, root / "acp.log"):
            yield Swarm(a, b, root, log)


@pytest.fixture
def browser(pair: Swarm) -> Iterator[Any]:
    """Chromium in the network namespace of n2, the node it logs into: its loopback is n2's."""
    with chromium_in(pair.here.node.namespace, pair.root) as launched:
        yield launched


def logged_in(browser: Any, node: SwarmNode, viewport: dict[str, int]) -> tuple[Any, list[str]]:
    """A page of ``node``'s web app, logged in by a fresh link; and the errors it reports."""
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    link = node.post("/login-link").json()["url"]
    page.goto(link)
    page.wait_for_selector('.node-group[data-node="n1"]', state="attached", timeout=WAIT_MS)
    return page, errors


def answer_lines(node: SwarmNode) -> list[dict[str, Any]]:
    return [line for line in node.get("/journal").json()["entries"] if line["kind"] == "answer"]


def test_every_nodes_sessions_answered_and_a_remote_terminal_opened_from_one_node_on_a_desktop(
    pair: Swarm, browser: Any
) -> None:
    key = pair.start("worker")
    keys = pair.root / "keys.log"
    far = pair.pane("far", keys)
    page, errors = logged_in(browser, pair.here, {"width": 1200, "height": 760})

    # grouped by node, this node first, each with its health; the other node's sessions in its group
    heads = page.locator(".node-group > .node-head")
    assert heads.nth(0).locator(".node-name").inner_text() == "n2"
    assert heads.nth(0).locator(".health").inner_text() == "this node"
    remote = page.locator('.node-group[data-node="n1"]')
    assert remote.locator(".health").inner_text() == "reachable"
    remote.locator(f'li.session[data-session="{key}"]').wait_for(timeout=WAIT_MS)
    assert remote.locator(f'li.session[data-session="{far}"] .name').inner_text() == "far"

    # a permission asked on n1 shows on its row with a badge, the rollup and a toast; Allow answers it on n1
    assert pair.here.post(f"/sessions/{key}/prompt", {"text": "ASK"}).status_code == 200
    row = remote.locator(f'li.session[data-session="{key}"]')
    row.locator('.request button[data-answer="allow"]').wait_for(timeout=WAIT_MS)
    assert row.locator(".badge").inner_text() == "needs input"
    assert "1 needs input" in remote.locator(".node-head .rollup").inner_text()
    page.locator(f'.toast[data-session="{key}"][data-what="needs input"]').wait_for(timeout=WAIT_MS)
    row.locator('.request button[data-answer="allow"]').click()
    row.locator(".request").wait_for(state="detached", timeout=WAIT_MS)
    [line] = answer_lines(pair.owner)
    assert (line["session_key"], line["answer"], line["via"], line["through"]) == (key, "allow", "web", "n2")

    # the pane on n1 opens in a terminal here, its WebSocket relayed by n2: keys reach it, output comes back
    remote.locator(f'li.session[data-session="{far}"]').click()
    view = page.locator(f'.view[data-session="{far}"]')
    view.locator(".xterm-rows").get_by_text("fake agent ready").wait_for(timeout=WAIT_MS)
    assert view.get_attribute("data-state") == "open"
    page.keyboard.type("from the browser on n2")
    page.keyboard.press("Enter")
    view.locator(".xterm-rows").get_by_text("fake reply").wait_for(timeout=WAIT_MS)
    assert b"from the browser on n2\r" in keys.read_bytes()

    # the cable to n1 is pulled: its group is dimmed and says how old what it shows is
    pair.owner.node.partition()
    try:
        page.locator('.node-group.stale[data-node="n1"]').wait_for(timeout=LOST_MS)
        health = remote.locator(".health").inner_text()
        assert re.fullmatch(r"unreachable · \d+s ago", health), health
        assert remote.locator(f'li.session[data-session="{key}"]').count() == 1  # its last frame, still shown
        assert (
            float(
                page.evaluate('getComputedStyle(document.querySelector(".node-group.stale > div")).opacity')
            )
            < 1
        )
    finally:
        pair.owner.node.heal()
    page.locator('.node-group[data-node="n1"]:not(.stale)').wait_for(timeout=LOST_MS)
    page.context.close()
    assert not errors, errors


def test_on_a_phone_the_cards_are_grouped_by_node_and_a_remote_request_is_answered_on_its_card(
    pair: Swarm, browser: Any
) -> None:
    key = pair.start("helper")
    keys = pair.root / "keys.log"
    far = pair.pane("far", keys)
    page, errors = logged_in(browser, pair.here, {"width": 390, "height": 844})
    group = page.locator('.card-node[data-node="n1"]')
    card = group.locator(f'.card[data-session="{key}"]')
    card.wait_for(timeout=WAIT_MS)
    assert group.locator(".health").inner_text() == "reachable"
    assert page.locator(".card-node > .node-head .node-name").first.inner_text() == "n2"
    assert page.locator("#sidebar").is_visible() is False
    assert pair.here.post(f"/sessions/{key}/prompt", {"text": "ASK"}).status_code == 200
    card.locator('.request button[data-answer="reject"]').wait_for(timeout=WAIT_MS)
    card.locator('.request button[data-answer="reject"]').click()
    card.locator(".request").wait_for(state="detached", timeout=WAIT_MS)
    [line] = answer_lines(pair.owner)
    assert (line["answer"], line["via"], line["through"]) == ("reject", "web", "n2")
    # opened from its card, the headless panel prompts it on n1 through /swarm/n1/sessions/…
    card.click()
    panel = page.locator(f'.view[data-session="{key}"]')
    panel.locator("textarea").fill("from the phone")
    panel.locator("textarea").press("Control+Enter")
    pair.owner.wait_for(lambda: b"from the phone" in pair.log.read_bytes(), "the prompt reached n1")

    # the pane on n1 opens full screen from its card, through n2, and the key row's keys reach it
    page.locator("#back").click()
    group.locator(f'.card[data-session="{far}"]').click()
    view = page.locator(f'.view[data-session="{far}"]')
    view.locator(".xterm-rows").get_by_text("fake agent ready").wait_for(timeout=WAIT_MS)
    assert page.locator("#keys").is_visible()
    page.keyboard.type("tapped")
    page.keyboard.press("Enter")
    view.locator(".xterm-rows").get_by_text("fake reply").wait_for(timeout=WAIT_MS)
    assert b"tapped\r" in keys.read_bytes()
    page.context.close()
    assert not errors, errors


def test_after_a_remote_session_ends_under_its_open_terminal_new_sessions_still_appear(
    pair: Swarm, browser: Any
) -> None:
    keys = pair.root / "keys.log"
    pair.pane("stays", pair.root / "stays.log")  # n1's tmux server outlives the session that ends
    far = pair.pane("far", keys)
    page, errors = logged_in(browser, pair.here, {"width": 1200, "height": 760})
    remote = page.locator('.node-group[data-node="n1"]')
    remote.locator(f'li.session[data-session="{far}"]').click()
    view = page.locator(f'.view[data-session="{far}"]')
    view.locator(".xterm-rows").get_by_text("fake agent ready").wait_for(timeout=WAIT_MS)

    # the person ends it from its terminal: it leaves the sidebar, its tab stays
    page.keyboard.type("/exit")
    page.keyboard.press("Enter")
    remote.locator(f'li.session[data-session="{far}"]').wait_for(state="detached", timeout=WAIT_MS)
    assert page.locator(f'.tab[data-session="{far}"]').count() == 1

    # the sidebar still follows the swarm: a session started on n1 afterwards shows
    later = pair.pane("later", pair.root / "later.log")
    remote.locator(f'li.session[data-session="{later}"] .name').wait_for(timeout=WAIT_MS)
    assert remote.locator(f'li.session[data-session="{later}"] .name').inner_text() == "later"
    page.context.close()
    assert not errors, errors


@pytest.mark.parametrize("viewport", [{"width": 1200, "height": 760}, {"width": 390, "height": 844}])
def test_another_nodes_plain_shell_and_its_agent_are_listed_as_its_own_are(
    pair: Swarm, browser: Any, viewport: dict[str, int]
) -> None:
    """A node with only a plain shell is not "No sessions."; an agent whose session has no name
    is called by its pane's name, not its harness; both open through this node, and on a phone
    each card shows the last lines its screen shows (issue 32: 6)."""
    shell = pair.shell("work", "shell-says-hi")
    phone = viewport["width"] < 700
    page, errors = logged_in(browser, pair.here, viewport)
    group = page.locator('.card-node[data-node="n1"]' if phone else '.node-group[data-node="n1"]')
    item = ".card" if phone else "li.session"
    row = group.locator(f'{item}[data-session="{shell}"]')
    row.wait_for(timeout=WAIT_MS)
    assert row.locator(".name").inner_text() == "work"
    assert group.locator(".empty").count() == 0
    if phone:  # its last lines, read on n1 through n2
        row.locator(".tail").get_by_text("shell-says-hi").wait_for(timeout=WAIT_MS)

    far = pair.pane("far", pair.root / "keys.log", named=False)
    agent = group.locator(f'{item}[data-session="{far}"]')
    agent.wait_for(timeout=WAIT_MS)
    assert agent.locator(".name").inner_text() == "far"  # the pane's name, not "claude"
    if phone:
        agent.locator(".tail").get_by_text("fake agent ready").wait_for(timeout=WAIT_MS)

    # the shell opens in a terminal here, relayed by n2 to n1's pane
    row.click()
    view = page.locator(f'.view[data-session="{shell}"]')
    view.locator(".xterm-rows").get_by_text("shell-says-hi").wait_for(timeout=WAIT_MS)
    page.keyboard.type("echo typed-$((6*7))")
    page.keyboard.press("Enter")
    view.locator(".xterm-rows").get_by_text("typed-42").wait_for(timeout=WAIT_MS)
    page.context.close()
    assert not errors, errors


def test_the_page_reads_the_union_once_and_follows_its_changes_from_there(pair: Swarm, browser: Any) -> None:
    """The union is read by ``GET /swarm/snapshot`` and ``/swarm/changes`` followed from its
    cursor, so the stream never carries the union again (41 MB at 50,000 sessions, read much
    faster by fetch); a session that starts between the two comes with the stream's replay."""
    before = pair.start("before")
    context = browser.new_context(viewport={"width": 1200, "height": 760})
    page = context.new_page()
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    between: list[str] = []

    def later(route: Any) -> None:
        if not between:
            key = pair.start("between")
            pair.here.wait_for(
                lambda: any(r["session_key"] == key for r in snapshot(pair.here)["records"]), "n2 holds it"
            )
            between.append(key)
        route.continue_()

    page.route("**/swarm/changes*", later)
    page.goto(pair.here.post("/login-link").json()["url"])
    remote = page.locator('.node-group[data-node="n1"]')
    remote.locator(f'li.session[data-session="{before}"]').wait_for(timeout=WAIT_MS)
    remote.locator(f'li.session[data-session="{between[0]}"]').wait_for(timeout=WAIT_MS)
    swarm = [url.split("/swarm/", 1)[1] for url in asked if "/swarm/" in url]
    assert swarm[:2] == ["nodes", "snapshot"], swarm
    [followed] = [path for path in swarm if path.startswith("changes")]
    assert re.fullmatch(r"changes\?since=\d+%3A\d+", followed), followed
    assert page.evaluate("window.roost.roster.swarmSource.readyState") == 1  # open
    context.close()


def test_with_no_swarm_the_page_asks_nothing_of_it_and_groups_by_folder_only(
    pair: Swarm, browser: Any
) -> None:
    alone = pair.here
    alone.ok("leave")
    context = browser.new_context(viewport={"width": 1200, "height": 760})
    page = context.new_page()
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.goto(alone.post("/login-link").json()["url"])
    page.wait_for_selector('#link[data-connected="yes"]', timeout=WAIT_MS)
    page.wait_for_timeout(500)
    assert page.locator(".node-group, .node-head").count() == 0
    assert page.evaluate("window.roost.roster.swarm") is None
    assert not [url for url in asked if "/swarm/" in url and not url.endswith("/swarm/nodes")]
    context.close()
