// The phone's card deck, in place of the sidebar on a narrow screen: one card per session,
// grouped by folder with the folder's rollup, each with its badge and the last lines its
// terminal shows. Tapping a card opens the terminal full screen.
//
// The last lines come from GET /terminals/{pane}/tail (a screen read, no live terminal per
// card): read again while the deck is in view, every few seconds and after roster changes.
// Badges still come only from the roster's change stream.

import { badge } from "./badges.js";
import { folderHead, groups, paneNumber } from "./sidebar.js";

const TAIL_LINES = 3;
const TAIL_EVERY_MS = 4000;

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
          const path = `/terminals/${encodeURIComponent(pane)}/tail?lines=${TAIL_LINES}`;
          const response = await fetch(path, { credentials: "same-origin", cache: "no-store" });
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

export function renderCards(deck, rows, { tails, onOpen }) {
  const list = document.createDocumentFragment();
  for (const [cwd, members] of groups(rows)) {
    const section = document.createElement("section");
    section.className = "card-folder";
    section.dataset.cwd = cwd;
    const head = folderHead(cwd, members);
    section.append(head);
    for (const row of members.sort((a, b) => paneNumber(a.pane) - paneNumber(b.pane))) {
      const card = document.createElement("article");
      card.className = "card";
      card.dataset.pane = row.pane;
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
      tail.textContent = (tails.lines.get(row.pane) || []).join("\n");
      const detail = document.createElement("span");
      detail.className = "detail";
      detail.textContent = row.harness ? `${row.harness} · ${row.detail}` : row.detail;
      card.append(top, tail, detail);
      card.addEventListener("click", () => onOpen(row.pane));
      card.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") onOpen(row.pane);
      });
      section.append(card);
    }
    list.append(section);
  }
  if (!rows.length) {
    const none = document.createElement("p");
    none.className = "empty";
    none.textContent = "No terminals yet: start one with New session.";
    list.append(none);
  }
  deck.replaceChildren(list);
}
