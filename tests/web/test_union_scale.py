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


FOLLOW = """async () => {
  const { Roster } = await import("/static/roster.js");
  const roster = new Roster();
  const node = (n, state) => ({
    node: `host-${n}`, node_id: `node${n}`, peer_state: state, peer_age_ms: 0, sessions: 2, dropped: 0,
    terminals: [{ pane: "%1", session: "main", window: "w", name: null, command: "sh", cwd: "/" }],
  });
  const record = (n, s, activity, liveness = "live") => ({
    session_key: `node${n}:${s}`, node: `host-${n}`, node_id: `node${n}`,
    peer_state: n ? "reachable" : "local", lane: "interactive", liveness, activity, occupant_id: s,
    tmux: { pane: `%${s}` }, harness: "claude",
  });
  const nodes = [node(0, "local"), node(1, "reachable"), node(2, "reachable")];
  const records = [0, 1, 2].flatMap((n) => [record(n, 1, "idle"), record(n, 2, "idle")]);
  roster.setUnion({ node_id: "node0", nodes, records });
  const said = [];
  const look = () => {
    const rows = roster.rows();
    said.push({
      ids: rows.map((row) => row.id),
      states: Object.fromEntries(rows.map((row) => [row.id, row.state])),
      nodes: roster.nodes().map((n) => [n.node_id, n.peer_state, (n.terminals || []).length]),
    });
    return rows;
  };
  const first = look();
  roster.swarmRecord({ node_id: "node1", record: record(1, 2, "active") });
  roster.swarmRecord({ node_id: "node0", record: record(0, 1, "active") });  // this node's: from /changes
  const second = look();
  const kept = (id) => first.find((row) => row.id === id) === second.find((row) => row.id === id);
  const reused = {
    untouched: kept("node2/%1"),
    touched: kept("node1/%1"),
    group: first.grouped.get("node2") === second.grouped.get("node2"),
  };
  roster.nodeStanding({ node: "host-2", node_id: "node2", peer_state: "unreachable", peer_age_ms: 1000,
    sessions: 2, dropped: 0 });
  const seventh = { pane: "%7", session: "main", window: "x", cwd: "/" };
  roster.nodeTerminals({ node_id: "node2", terminals: [seventh] });
  look();
  roster.swarmRecord({ node_id: "node1", record: record(1, 2, "idle", "ended") });
  roster.nodeLeft({ node_id: "node2", reason: "revoked" });
  look();
  roster.nodeStanding({ node: "host-3", node_id: "node3", peer_state: "reachable", peer_age_ms: 0,
    sessions: 1, dropped: 0 });
  roster.swarmRecord({ node_id: "node3", record: record(3, 4, "needs_attention") });
  look();
  roster.nodeLeft({ node_id: "node0", reason: "this_node_revoked" });
  look();
  return { said, reused };
}"""


def test_the_union_follows_one_change_at_a_time_and_remakes_only_the_changed_nodes_rows(
    page: Any, web: Web
) -> None:
    """The page follows ``/swarm/changes`` (a record a change, not the union): each kind of
    frame moves what the sidebar shows, and a change of one node leaves every other node's rows
    as they were made (fifty thousand rows are not made again for one change)."""
    web.roost.start()
    log_in(page, web)
    result = page.evaluate(FOLLOW)
    said, reused = result["said"], result["reused"]
    assert reused == {"untouched": True, "touched": False, "group": True}  # its heading's sums are kept
    remote = ["node1/%1", "node1/%2", "node2/%1", "node2/%2"]
    assert [r for r in said[0]["ids"] if "/" in r] == remote
    assert said[1]["states"]["node1/%2"] == "working"
    assert said[1]["states"]["node1/%1"] == "idle"
    assert said[2]["nodes"][2] == ["node2", "unreachable", 1]
    assert [r for r in said[2]["ids"] if r.startswith("node2/")] == ["node2/%7", "node2/%1", "node2/%2"]
    assert [r for r in said[3]["ids"] if "/" in r] == ["node1/%1"]  # node2 gone; node1's %2 ended unlisted
    assert [n[0] for n in said[4]["nodes"]] == ["node0", "node1", "node3"]
    assert said[4]["states"]["node3/%4"] == "blocked"
    assert said[5]["nodes"] == [["node0", "local", 1]]
    assert not [r for r in said[5]["ids"] if "/" in r]
