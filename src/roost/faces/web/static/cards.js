// The phone's card deck, in place of the sidebar on a narrow screen: one card per session (a
// terminal, or a headless session), grouped by folder with the folder's rollup, each with its
// badge and the last lines its terminal shows. Tapping a card opens the session full screen.
//
// A card previews its session's last reply when the roster keeps one (the record's recap: a
// headless session's, or the reply an agent's Stop hook handed over), since an agent's last
// screen lines are its own chrome (Claude Code's composer and "auto mode on" footer), not what
// it said; other terminals (a plain shell, an agent before its first reply) show the last
// lines of their screen, from GET /terminals/{pane}/tail (a screen read, no live terminal per
// card), or for another node's GET /swarm/{node}/sessions/{pane}/tail, which that node answers:
// read again while the deck is in view, every few seconds and after roster changes.
// Badges still come only from the roster's change stream. A session that waits on a person
// shows what it asks and the answers it offers (request.js), right on its card.

import { badge } from "./badges.js";
import { remotePaneOf } from "./roster.js";
import { requestView } from "./request.js";
import { budgetView, spendView } from "./cost.js";
import { byNode, byPlace, folderHead, groups, isOpen, markRow, nodeGroup } from "./sidebar.js";

const TAIL_LINES = 3;
const TAIL_EVERY_MS = 4000;

// Where a terminal's last lines are read: this node's pane from its own tmux, another node's
// ("NODE_ID/%N") through this node, which asks that node for them (three lines, as here).
function tailPath(id) {
  const where = remotePaneOf(id);
  if (!where) return `/terminals/${encodeURIComponent(id)}/tail?lines=${TAIL_LINES}`;
  return `/swarm/${encodeURIComponent(where.node_id)}/sessions/${encodeURIComponent(where.pane)}/tail`;
}

export class Tails extends EventTarget {
  constructor() {
    super();
    this.lines = new Map(); // pane -> [line, …]
    this.timer = null;
    this.panes = () => [];
  }

  // Keep reading while ``active()`` says the deck is showing.
  start(panes, active) {
    this.panes = panes;
    this.active = active;
    const tick = async () => {
      if (this.active() && !document.hidden) await this.refresh();
      this.timer = setTimeout(tick, TAIL_EVERY_MS);
    };
    tick();
  }

  async refresh() {
    const panes = this.panes();
    const read = await Promise.all(
      panes.map(async (pane) => {
        try {
          const response = await fetch(tailPath(pane), { credentials: "same-origin", cache: "no-store" });
          return response.ok ? [pane, (await response.json()).lines] : null;
        } catch {
          return null;
        }
      }),
    );
    let changed = false;
    for (const found of read) {
      if (!found) continue;
      const [pane, lines] = found;
      if ((this.lines.get(pane) || []).join("\n") !== lines.join("\n")) changed = true;
      this.lines.set(pane, lines);
    }
    if (changed) this.dispatchEvent(new Event("change"));
  }
}

function lastLines(row, { tails, recordOf }) {
  const record = recordOf(row.id);
  const reply = ((record && record.recap) || "").split("\n").filter((line) => line.trim());
  if (reply.length || !(row.pane || row.remotePane)) return reply.slice(-TAIL_LINES);
  return tails.lines.get(row.id) || [];
}

// `nodes`: the swarm's nodes (roster.js nodes()), or null with no swarm: in a swarm the folders
// are grouped by node, as in the sidebar.
export function renderCards(
  deck,
  rows,
  { tails, recordOf, onOpen, onAnswered, onToggle, gateCommand, nodes = null },
) {
  const how = { tails, recordOf, onOpen, onAnswered, gateCommand };
  if (nodes) {
    const all = document.createDocumentFragment();
    for (const [node, members] of byNode(rows, nodes)) {
      const open = isOpen(node, rows.length);
      const folders = document.createElement("div");
      if (open) renderFolderCards(folders, members, how, "No sessions.");
      all.append(nodeGroup(node, members, folders, "card-node", { open, onToggle }));
    }
    deck.replaceChildren(all);
    return;
  }
  const empty = "No terminals yet: start one with New session.";
  renderFolderCards(deck, rows, how, empty);
}

function renderFolderCards(deck, rows, { tails, recordOf, onOpen, onAnswered, gateCommand }, empty) {
  const list = document.createDocumentFragment();
  for (const [cwd, members] of groups(rows)) {
    const section = document.createElement("section");
    section.className = "card-folder";
    section.dataset.cwd = cwd;
    const head = folderHead(cwd, members);
    section.append(head);
    for (const row of members.sort(byPlace)) {
      const card = document.createElement("article");
      card.className = "card";
      markRow(card, row);
      card.dataset.state = row.state || "";
      card.tabIndex = 0;
      card.setAttribute("role", "button");
      const top = document.createElement("header");
      const label = document.createElement("span");
      label.className = "name";
      label.textContent = row.name;
      top.append(label, badge(row.state));
      const tail = document.createElement("pre");
      tail.className = "tail";
      tail.textContent = lastLines(row, { tails, recordOf }).join("\n");
      const detail = document.createElement("span");
      detail.className = "detail";
      detail.textContent = row.harness ? `${row.harness} · ${row.detail}` : row.detail;
      card.append(top, tail, detail);
      const spent = spendView([row.record]);
      if (spent) detail.append(" · ", spent);
      const held = budgetView(row.record);
      if (held) card.append(held);
      const request = requestView(row.record, { onAnswered, gateCommand, onTerminal: () => onOpen(row.id) });
      if (request) card.append(request);
      card.addEventListener("click", () => onOpen(row.id));
      card.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") onOpen(row.id);
      });
      section.append(card);
    }
    list.append(section);
  }
  if (!rows.length) {
    const none = document.createElement("p");
    none.className = "empty";
    none.textContent = empty;
    list.append(none);
  }
  deck.replaceChildren(list);
}
