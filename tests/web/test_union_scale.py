"""A swarm of a thousand nodes in the web app's sidebar, in Debian's Chromium: every node's
heading is drawn, this node's sessions too, and another node's sessions only once the person
opens it; a swarm whose sessions fit a screen shows them all, as it always did.

The sidebar module the daemon serves (``/static/sidebar.js``) draws a union made here, fifty
sessions a node: a real swarm of that size is ``bench/swarm_scale.py``'s to measure.
"""

from __future__ import annotations

from typing import Any

from tests.web.conftest import Web
from tests.web.test_browser import log_in

DRAW = """async ([nodes, sessions]) => {
  const sidebar = await import("/static/sidebar.js");
  const known = [], rows = [];
  for (let n = 0; n < nodes; n++) {
    const id = `node${n}`;
    const state = n ? "reachable" : "local";
    known.push({ node: `host-${n}`, node_id: id, peer_state: state, self: n === 0, age_ms: 0 });
    for (let s = 0; s < sessions; s++) {
      rows.push({
        id: `${id}:${s}`, node_id: id, name: `agent-${s}`, cwd: `/home/dev/project-${s % 7}`,
        state: s % 3 ? "idle" : "working", detail: "headless", harness: "claude", since: "",
        record: { session_key: `${id}:${s}`, spend: { turns: 1, cost: { USD: 0.5 } } },
      });
    }
  }
  const nav = document.createElement("nav");
  nav.id = "scale";
  document.body.append(nav);
  const draw = () => sidebar.renderSidebar(nav, rows, {
    active: null, onOpen() {}, onAnswered() {}, gateCommand() { return null; }, onToggle: draw, nodes: known,
  });
  const start = performance.now();
  draw();
  return performance.now() - start;
}"""


def counts(page: Any) -> tuple[int, int]:
    found = "s => document.querySelectorAll(s).length"
    return page.evaluate(found, "#scale .node-group"), page.evaluate(found, "#scale li")


def test_a_thousand_nodes_draw_their_headings_and_this_nodes_sessions(page: Any, web: Web) -> None:
    web.roost.start()
    log_in(page, web)
    page.evaluate(DRAW, [1000, 50])
    assert counts(page) == (1000, 50)  # 50,000 sessions: this node's 50 are drawn
    mine = page.locator('#scale .node-group[data-node-id="node0"]')
    assert mine.get_attribute("data-open") == "yes"
    far = '#scale .node-group[data-node-id="node999"]'
    assert page.locator(far).get_attribute("data-open") == "no"
    head = page.locator(f"{far} .node-head")
    assert head.get_attribute("aria-expanded") == "false"
    assert "1 working" not in head.inner_text() and "17 working" in head.inner_text()  # its rollup
    assert page.locator(f"{far} .node-cost").inner_text() == "25.00 USD"

    head.click()
    assert counts(page) == (1000, 100)
    assert page.locator(f"{far} .node-head").get_attribute("aria-expanded") == "true"
    page.locator(f"{far} .node-head").press("Enter")  # closed again, by the keyboard
    assert counts(page) == (1000, 50)
    page.locator('#scale .node-group[data-node-id="node0"] .node-head').click()
    assert counts(page) == (1000, 0)  # this node too, when the person closes it


def test_a_swarm_that_fits_a_screen_shows_every_session(page: Any, web: Web) -> None:
    web.roost.start()
    log_in(page, web)
    page.evaluate(DRAW, [4, 50])
    assert counts(page) == (4, 200)
