// The sidebar: one row per session (a terminal, or a headless session), grouped by folder (its
// working directory), each folder with a rollup of its sessions' states; a session that waits
// on a person shows what it asks under its name, with the answers it offers (request.js).
// Rendered whole from the roster on every change: a few dozen rows cost nothing, and no row can
// drift from the roster. In a swarm the folders are grouped by node first, each node headed by
// its name, its standing and its rollup; a node that cannot be reached is shown dimmed, with
// how old what is shown of it is, and its sessions can still be opened and answered (the
// answer is refused, with the reason, when the node is still away). There a node's section is
// kept from one draw to the next until something it shows changes: a frame carrying one node's
// change makes that node's section alone, not a thousand.

import { badge, rollup } from "./badges.js";
import { budgetView, spendView } from "./cost.js";
import { requestView, waitingOn } from "./request.js";

export function folderName(cwd) {
  if (!cwd) return "(unknown folder)";
  const parts = cwd.replace(/\/+$/, "").split("/");
  return parts[parts.length - 1] || "/";
}

export function groups(rows) {
  const byFolder = new Map();
  for (const row of rows) {
    if (!byFolder.has(row.cwd)) byFolder.set(row.cwd, []);
    byFolder.get(row.cwd).push(row);
  }
  return [...byFolder.entries()].sort(([a], [b]) => folderName(a).localeCompare(folderName(b)) || a.localeCompare(b));
}

function paneNumber(pane) {
  return Number.parseInt(pane.slice(1), 10) || 0;
}

/** A folder's order: its terminals by pane number, then its headless sessions oldest first. */
export function byPlace(a, b) {
  const [one, two] = [a.pane || a.remotePane, b.pane || b.remotePane];
  if (one && two) return paneNumber(one) - paneNumber(two);
  if (one || two) return one ? -1 : 1;
  return (a.since || "").localeCompare(b.since || "");
}

/** Mark an element with the row it stands for: a terminal's pane, or a headless session's key
 * (or another node's terminal's "NODE_ID/%N", with its pane beside it). */
export function markRow(element, row) {
  if (row.pane) element.dataset.pane = row.pane;
  else element.dataset.session = row.id;
  if (row.remotePane) element.dataset.remotePane = row.remotePane;
}

/** A folder's heading: its name and the rollup of its sessions' states ("2 working · 1 needs input"). */
export function folderHead(cwd, members) {
  const head = document.createElement("h2");
  head.title = cwd;
  const name = document.createElement("span");
  name.className = "folder-name";
  name.textContent = folderName(cwd);
  const summary = document.createElement("span");
  summary.className = "rollup";
  summary.textContent = rollup(members.map((row) => row.state));
  head.append(name);
  const spent = spendView(members.map((row) => row.record), "cost folder-cost");
  if (spent) head.append(spent);
  head.append(summary);
  return head;
}

// "3m": how long ago, in one unit, as `rosterd list --swarm` says it.
export function age(ms) {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  for (const [unit, size] of [["d", 86400], ["h", 3600], ["m", 60]]) {
    if (seconds >= size) return `${Math.floor(seconds / size)}${unit}`;
  }
  return `${seconds}s`;
}

// What a node's heading says of it: "this node", "reachable", or "unreachable · 41s ago".
export function standing(node) {
  if (node.self) return "this node";
  if (node.peer_state === "unreachable") return `unreachable · ${age(node.age_ms)} ago`;
  return node.peer_state;
}

/** Rows grouped by node, in the order of `nodes` (this node first): [node, its rows]. The
 * roster's own grouping when the rows carry it (`rows.grouped`: a node's array is the same
 * until that node changes, so what is drawn from it can be kept), else one pass over the rows:
 * a thousand nodes of fifty sessions each are fifty thousand rows. */
export function byNode(rows, nodes) {
  if (rows.grouped) return nodes.map((node) => [node, rows.grouped.get(node.node_id) || []]);
  const of = new Map(nodes.map((node) => [node.node_id, []]));
  for (const row of rows) of.get(row.node_id)?.push(row);
  return nodes.map((node) => [node, of.get(node.node_id)]);
}

// A node's rollup and cost, by its rows as the roster made them: a swarm's draw, once a frame
// while changes come, would otherwise count every node's sessions again each time.
const summaries = new WeakMap();
function summaryOf(members) {
  let found = summaries.get(members);
  if (!found) {
    const spent = spendView(members.map((row) => row.record), "cost node-cost");
    found = { rollup: rollup(members.map((row) => row.state)), spent };
    summaries.set(members, found);
  }
  return found;
}

// How many sessions a swarm may have before the page shows each node but this one as its
// heading alone (name, standing, rollup and cost) until the person opens it: drawing fifty
// thousand rows takes seconds, a thousand headings a few milliseconds. A node the person
// opened or closed stays so, in this tab.
export const SCREENFUL = 200;
const toggled = new Map(); // node id -> whether the person left it open

/** Whether the node's sessions are drawn, in a swarm of `total` sessions. */
export function isOpen(node, total) {
  return toggled.has(node.node_id) ? toggled.get(node.node_id) : Boolean(node.self) || total <= SCREENFUL;
}

/** A node's group: a section headed by its name, standing and rollup, holding `body` when
 * `open`; a click (or Enter) on the heading opens or closes it, then `onToggle()` redraws. */
export function nodeGroup(node, members, body, className, { open = true, onToggle = null } = {}) {
  const group = document.createElement("section");
  group.className = className;
  group.dataset.node = node.node;
  group.dataset.nodeId = node.node_id;
  group.dataset.peerState = node.peer_state;
  group.dataset.open = open ? "yes" : "no";
  if (node.peer_state === "unreachable") group.classList.add("stale");
  const head = document.createElement("h2");
  head.className = "node-head";
  if (onToggle) {
    head.tabIndex = 0;
    head.setAttribute("role", "button");
    head.setAttribute("aria-expanded", open ? "true" : "false");
    head.title = open ? "Hide this node's sessions" : `Show this node's ${members.length} sessions`;
    const flip = () => {
      toggled.set(node.node_id, !open);
      onToggle();
    };
    head.addEventListener("click", flip);
    head.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") flip();
    });
  }
  const name = document.createElement("span");
  name.className = "node-name";
  name.textContent = node.node;
  const health = document.createElement("span");
  health.className = "health";
  health.textContent = standing(node);
  const summary = document.createElement("span");
  summary.className = "rollup";
  const found = summaryOf(members);
  summary.textContent = found.rollup;
  head.append(name, health, summary);
  if (found.spent) head.append(found.spent.cloneNode(true));
  group.append(head);
  if (open) group.append(body);
  return group;
}

// `onAnswered(record)`: a request answered from a row; the record after the answer;
// `onLifted()`: a budget lifted from a row;
// `gateCommand(record)`: see request.js. `nodes`: the swarm's nodes (roster.js nodes()), or
// null with no swarm.
// `onToggle()`: a node opened or closed, to draw again.
export function renderSidebar(
  nav,
  rows,
  { active, onOpen, onAnswered, onLifted, onToggle, gateCommand, nodes = null },
) {
  const how = { active, onOpen, onAnswered, onLifted, onToggle, gateCommand };
  if (nodes) {
    renderNodes(nav, rows, nodes, how);
    return;
  }
  drawn.delete(nav);
  const empty = "No terminals yet: start one with New session or `roost new`.";
  renderFolders(nav, rows, how, empty);
}

// What each nav shows of a swarm: { how: the latest draw's options, relay: its callbacks as the
// kept sections call them, sections: node id -> { element, made, health } }. A nav of its own
// for each: a test's nav draws the same nodes as the page's.
const drawn = new WeakMap();

function keeper() {
  const kept = { how: {}, sections: new Map() };
  // A kept section's handlers were made at an earlier draw: they call the latest callbacks.
  const relay = (name) => (...args) => kept.how[name]?.(...args);
  const names = ["onOpen", "onAnswered", "onLifted", "onToggle"];
  kept.relay = Object.fromEntries(names.map((name) => [name, relay(name)]));
  return kept;
}

// Each node's section, made again only when what it shows changed (its rows are the same array
// until its node changes: see byNode), then put in `nav` in the order of `nodes`.
function renderNodes(nav, rows, nodes, how) {
  const kept = drawn.get(nav) || keeper();
  drawn.set(nav, kept);
  kept.how = how;
  const sections = new Map();
  for (const [node, members] of byNode(rows, nodes)) {
    const made = madeOf(node, members, isOpen(node, rows.length), how);
    const was = kept.sections.get(node.node_id);
    const section = was && sameMade(was.made, made) ? was : nodeSection(node, members, made, kept);
    // An unreachable node's age moves with no change of its own: said where it is.
    const health = standing(node);
    if (section.health.textContent !== health) section.health.textContent = health;
    sections.set(node.node_id, section);
  }
  kept.sections = sections;
  place(nav, [...sections.values()].map((section) => section.element));
}

// What a node's section is made from, but for the age in its standing.
function madeOf(node, members, open, how) {
  return {
    members,
    name: node.node,
    peerState: node.peer_state,
    open,
    toggles: Boolean(how.onToggle),
    rowsShow: open ? beyondRecords(members, how) : "",
  };
}

function sameMade(one, two) {
  return Object.keys(one).every((key) => one[key] === two[key]);
}

// What a node's open rows show that their records do not say: which row is active, and the
// command that would let the page answer each request (it changes when the gates do).
function beyondRecords(members, { active, gateCommand }) {
  const shows = [];
  for (const row of members) {
    if (row.id === active) shows.push(`active ${row.id}`);
    if (gateCommand && waitingOn(row.record)) shows.push(`${row.id} ${gateCommand(row.record) || ""}`);
  }
  return shows.join("\n");
}

function nodeSection(node, members, made, { how, relay }) {
  const folders = document.createElement("div");
  const calls = { ...relay, active: how.active, gateCommand: how.gateCommand };
  if (made.open) renderFolders(folders, members, calls, "No sessions.");
  const onToggle = made.toggles ? relay.onToggle : null;
  const element = nodeGroup(node, members, folders, "node-group", { open: made.open, onToggle });
  return { element, made, health: element.querySelector(":scope > .node-head > .health") };
}

// `nav`'s children made `elements`, in order, moving none that is already in its place: taking
// a thousand sections out and putting them back costs the page a layout of them all.
function place(nav, elements) {
  const wanted = new Set(elements);
  for (const child of [...nav.childNodes]) if (!wanted.has(child)) child.remove();
  let next = nav.firstChild;
  for (const element of elements) {
    if (element === next) next = next.nextSibling;
    else nav.insertBefore(element, next);
  }
}

// The folders of `rows` into `nav`; `empty` is what it says when there are none.
function renderFolders(nav, rows, { active, onOpen, onAnswered, onLifted, gateCommand }, empty) {
  const list = document.createDocumentFragment();
  for (const [cwd, members] of groups(rows)) {
    const section = document.createElement("section");
    section.className = "folder";
    section.dataset.cwd = cwd;
    const head = folderHead(cwd, members);
    const ul = document.createElement("ul");
    for (const row of members.sort(byPlace)) {
      const li = document.createElement("li");
      li.className = "session";
      markRow(li, row);
      li.dataset.state = row.state || "";
      if (row.id === active) li.classList.add("active");
      li.tabIndex = 0;
      li.title = `${row.detail}\n${cwd}`;
      const label = document.createElement("span");
      label.className = "name";
      label.textContent = row.name;
      const detail = document.createElement("span");
      detail.className = "detail";
      detail.textContent = row.harness ? `${row.harness} · ${row.detail}` : row.detail;
      const text = document.createElement("span");
      text.className = "text";
      text.append(label, detail);
      li.append(text);
      const spent = spendView([row.record]);
      if (spent) li.append(spent);
      li.append(badge(row.state));
      const held = budgetView(row.record, { onLifted });
      if (held) li.append(held);
      const request = requestView(row.record, { onAnswered, gateCommand, onTerminal: () => onOpen(row.id) });
      if (request) li.append(request);
      li.addEventListener("click", () => onOpen(row.id));
      li.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") onOpen(row.id);
      });
      ul.append(li);
    }
    section.append(head, ul);
    list.append(section);
  }
  if (!rows.length) {
    const none = document.createElement("p");
    none.className = "empty";
    none.textContent = empty;
    list.append(none);
  }
  nav.replaceChildren(list);
}
