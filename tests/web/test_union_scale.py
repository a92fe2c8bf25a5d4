"""A swarm of a thousand nodes in the web app's sidebar, in Debian's Chromium: every node's
heading is drawn, this node's sessions too, and another node's sessions only once the person
opens it; a swarm whose sessions fit a screen shows them all, as it always did. A draw after a
change makes again only the sections of the nodes whose drawing changed, and leaves the others
in place.

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


SWARM = """async ([nodes, sessions]) => {
  const sidebar = await import("/static/sidebar.js");
  const row = (id, s, state) => ({
    id: `${id}:${s}`, node_id: id, name: `agent-${s}`, cwd: `/home/dev/project-${s % 7}`,
    state, detail: "headless", harness: "claude", since: "",
    record: { session_key: `${id}:${s}`, spend: { turns: 1, cost: { USD: 0.5 } } },
  });
  const nav = document.createElement("nav");
  nav.id = "swarm";
  document.body.append(nav);
  const swarm = {
    nav, known: [], grouped: new Map(), active: null, opened: [], how: {},
    // A node's rows and standing as roster.js keeps them.
    arrive(n) {
      const id = `node${n}`;
      const made = Array.from({ length: sessions }, (_, s) => row(id, s, s % 3 ? "idle" : "working"));
      swarm.grouped.set(id, made);
      const peer_state = n ? "reachable" : "local";
      return { node: `host-${n}`, node_id: id, peer_state, self: n === 0, age_ms: 0 };
    },
    // Node `id`'s rows made again, session `s` in `state`: what roster.js does for a change of it.
    change(id, s, state) {
      const made = swarm.grouped.get(id).map((one) => (one.id === `${id}:${s}` ? { ...one, state } : one));
      swarm.grouped.set(id, made);
    },
    // Every row, each node's array in `grouped`, as roster.js's rows() hands them.
    rows() {
      const rows = swarm.known.flatMap((node) => swarm.grouped.get(node.node_id));
      Object.defineProperty(rows, "grouped", { value: swarm.grouped });
      return rows;
    },
    draw(rows = swarm.rows()) {
      sidebar.renderSidebar(nav, rows, {
        active: swarm.active, onOpen: (id) => swarm.opened.push(`first:${id}`), onAnswered() {},
        gateCommand: () => null, onToggle: () => swarm.draw(), nodes: swarm.known, ...swarm.how,
      });
    },
    // What a draw after `change(swarm)` did: the sections in order, those made again (every
    // section drawn before is marked), how many of those drawn before are still in the page,
    // and what the nav saw change.
    redraw(change) {
      for (const section of nav.children) section.drawnBefore = true;
      const before = [...nav.children];
      const watch = new MutationObserver(() => {});
      watch.observe(nav, { childList: true, subtree: true, attributes: true, characterData: true });
      change(swarm);
      swarm.draw();
      const seen = watch.takeRecords();
      watch.disconnect();
      const sections = [...nav.children];
      const top = seen.filter((record) => record.target === nav);
      return {
        order: sections.map((section) => section.dataset.nodeId),
        remade: sections.filter((section) => !section.drawnBefore).map((section) => section.dataset.nodeId),
        attached: before.filter((section) => section.parentNode === nav).length,
        added: top.reduce((sum, record) => sum + record.addedNodes.length, 0),
        removed: top.reduce((sum, record) => sum + record.removedNodes.length, 0),
        mutations: seen.length,
      };
    },
  };
  for (let n = 0; n < nodes; n++) swarm.known.push(swarm.arrive(n));
  window.swarm = swarm;
  swarm.draw();
}"""
"""A swarm of ``nodes`` nodes of ``sessions`` sessions drawn into a nav of its own, as the page
draws the roster's rows (each node's array kept until that node changes): ``swarm.redraw``
draws again after a change and says which sections were made again."""


def swarm(page: Any, web: Web, nodes: int, sessions: int) -> None:
    web.roost.start()
    log_in(page, web)
    page.evaluate(SWARM, [nodes, sessions])


def redraw(page: Any, change: str = "") -> dict[str, Any]:
    """Draw again after ``change``, a JS body with ``s`` the swarm."""
    return dict(page.evaluate(f"() => swarm.redraw((s) => {{ {change} }})"))


def section(page: Any, node_id: str) -> Any:
    return page.locator(f'#swarm > [data-node-id="{node_id}"]')


def test_one_nodes_change_remakes_its_section_alone_and_leaves_the_rest_in_place(page: Any, web: Web) -> None:
    """A frame carries one node's change: that node's section is made again, the 999 others
    are the very elements drawn before, where they were (not taken out and put back)."""
    swarm(page, web, 1000, 50)
    head = section(page, "node500").locator(".node-head")
    assert "17 working" in head.inner_text()
    drew = redraw(page, 's.change("node500", 1, "working")')
    assert drew["order"] == [f"node{n}" for n in range(1000)]
    assert drew["remade"] == ["node500"]
    assert drew["attached"] == 999
    assert (drew["added"], drew["removed"]) == (1, 1)
    assert "18 working" in head.inner_text()


def test_a_draw_with_nothing_changed_leaves_the_page_as_it_is(page: Any, web: Web) -> None:
    swarm(page, web, 1000, 50)
    drew = redraw(page)
    assert drew["remade"] == [] and drew["attached"] == 1000
    assert drew["mutations"] == 0


def test_a_node_opened_and_closed_by_its_heading_is_the_only_one_drawn_again(page: Any, web: Web) -> None:
    swarm(page, web, 30, 10)  # 300 sessions: every node but this one closed
    drew = redraw(page, "s.nav.querySelector('[data-node-id=\"node7\"] .node-head').click()")
    assert drew["remade"] == ["node7"] and drew["attached"] == 29
    assert section(page, "node7").get_attribute("data-open") == "yes"
    assert section(page, "node7").locator("li.session").count() == 10
    assert page.evaluate("() => swarm.nav.querySelectorAll('li.session').length") == 20
    drew = redraw(page, "s.nav.querySelector('[data-node-id=\"node7\"] .node-head').click()")
    assert drew["remade"] == ["node7"] and drew["order"] == [f"node{n}" for n in range(30)]
    assert section(page, "node7").get_attribute("data-open") == "no"
    assert section(page, "node7").locator("li.session").count() == 0


def test_the_active_row_moving_to_another_node_redraws_the_two_nodes(page: Any, web: Web) -> None:
    swarm(page, web, 4, 10)  # 40 sessions: every node open
    actives = "() => [...swarm.nav.querySelectorAll('li.active')].map((li) => li.dataset.session)"
    drew = redraw(page, 's.active = "node1:3"')
    assert drew["remade"] == ["node1"]
    assert page.evaluate(actives) == ["node1:3"]
    drew = redraw(page, 's.active = "node2:4"')
    assert drew["remade"] == ["node1", "node2"] and drew["order"] == ["node0", "node1", "node2", "node3"]
    assert page.evaluate(actives) == ["node2:4"]
    drew = redraw(page, 's.active = "node2:5"')
    assert drew["remade"] == ["node2"]
    assert page.evaluate(actives) == ["node2:5"]


def test_a_node_turning_unreachable_is_drawn_stale_and_its_age_kept_current(page: Any, web: Web) -> None:
    swarm(page, web, 4, 10)
    away = 's.known[2] = { ...s.known[2], peer_state: "unreachable", age_ms: MS }'
    drew = redraw(page, away.replace("MS", "41000"))
    assert drew["remade"] == ["node2"]
    stale = section(page, "node2")
    assert stale.get_attribute("class") == "node-group stale"
    assert stale.get_attribute("data-peer-state") == "unreachable"
    assert stale.locator(".health").inner_text() == "unreachable · 41s ago"
    drew = redraw(page, away.replace("MS", "65000"))  # only its age moved: said, in place
    assert drew["remade"] == [] and drew["mutations"] == 1
    assert stale.locator(".health").inner_text() == "unreachable · 1m ago"
    drew = redraw(page, 's.known[2] = { ...s.known[2], peer_state: "reachable", age_ms: 0 }')
    assert drew["remade"] == ["node2"]
    assert section(page, "node2").get_attribute("class") == "node-group"
    assert section(page, "node2").locator(".health").inner_text() == "reachable"


def test_a_node_leaving_and_nodes_arriving_keep_the_order_of_the_swarm(page: Any, web: Web) -> None:
    swarm(page, web, 5, 10)
    drew = redraw(page, "s.known.splice(1, 1); s.known.splice(2, 0, s.arrive(8)); s.known.push(s.arrive(9))")
    assert drew["order"] == ["node0", "node2", "node8", "node3", "node4", "node9"]
    assert drew["remade"] == ["node8", "node9"] and drew["attached"] == 4
    assert (drew["added"], drew["removed"]) == (2, 1)
    assert section(page, "node9").locator(".node-name").inner_text() == "host-9"
    assert section(page, "node9").locator("li.session").count() == 10


def test_a_swarm_that_ends_and_comes_back_is_drawn_whole_apart_from_another_nav(page: Any, web: Web) -> None:
    """No swarm (this node revoked: the rows drawn by folder) and a swarm again; a second nav
    drawn the same rows keeps sections of its own, and the latest callbacks answer a click."""
    swarm(page, web, 3, 10)
    tops = "() => [...swarm.nav.children].map((child) => child.className)"
    page.evaluate("() => { swarm.known.splice(1); swarm.how = { nodes: null }; swarm.draw(); }")
    assert set(page.evaluate(tops)) == {"folder"}
    drew = redraw(page, "s.known.push(s.arrive(1), s.arrive(2)); s.how = {}")
    assert drew["order"] == ["node0", "node1", "node2"]
    assert page.evaluate(tops) == ["node-group"] * 3
    assert page.evaluate("() => swarm.nav.querySelectorAll('li.session').length") == 30

    page.evaluate("""async () => {
      const sidebar = await import("/static/sidebar.js");
      window.other = document.createElement("nav");
      document.body.append(other);
      sidebar.renderSidebar(other, swarm.rows(), { active: null, onOpen() {}, onAnswered() {},
        gateCommand: () => null, onToggle() {}, nodes: swarm.known });
    }""")
    assert page.evaluate("() => other.children.length") == 3
    drew = redraw(page, "s.how = { onOpen: (id) => s.opened.push(`latest:${id}`) }")
    assert drew["remade"] == [] and page.evaluate("() => other.children.length") == 3
    page.evaluate("() => swarm.nav.querySelector('li[data-session=\"node1:2\"]').click()")
    assert page.evaluate("() => swarm.opened") == ["latest:node1:2"]


def test_a_request_is_drawn_again_when_only_its_gate_changed(page: Any, web: Web) -> None:
    """The command that would let the page answer a request (gates.js) may change with no
    change of the rows: the row that shows it is drawn again."""
    swarm(page, web, 2, 3)
    asks = """s.change("node0", 1, "blocked");
      const rows = s.grouped.get("node0");
      rows[1].record = { ...rows[1].record, activity: "needs_attention",
        pending: { id: "r1", tool: "Bash", summary: "npm test", answerable: false } };"""
    drew = redraw(page, asks)
    assert drew["remade"] == ["node0"]
    assert section(page, "node0").locator(".request .gate-off").count() == 0
    drew = redraw(page, 's.how = { gateCommand: () => "roost gate claude on" }')
    assert drew["remade"] == ["node0"]
    assert section(page, "node0").locator(".request .gate-off code").inner_text() == "roost gate claude on"
    assert redraw(page)["remade"] == []
