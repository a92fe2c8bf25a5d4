// The page: the sidebar of sessions, the tabs of open ones, and the terminal of the active tab;
// on a phone, a deck of session cards instead, and one terminal full screen under a key row.
// State lives in the roster (roster.js) and the open terminals (terminal.js); this module only
// wires them to the page and re-renders when either changes.

import { badge } from "./badges.js";
import { renderCards, Tails } from "./cards.js";
import { KeyRow } from "./keys.js";
import { Launcher } from "./launcher.js";
import { Notifier } from "./notify.js";
import { Roster, Unauthorized } from "./roster.js";
import { markSeen, Settings } from "./settings.js";
import { renderSidebar } from "./sidebar.js";
import { TerminalView } from "./terminal.js";

const PHONE = matchMedia("(max-width: 699px)");

const roster = new Roster();
const open = new Map(); // pane -> { view, box }
const tails = new Tails();
let active = null;
// On a phone one thing shows at a time: the deck of cards, or the active terminal.
let phoneView = "deck";

const $ = (id) => document.getElementById(id);
const keys = new KeyRow($("keys"), { target: () => (active ? open.get(active).view : null) });
// A session counts as seen while it is this tab's active terminal and the tab is in view.
const notifier = new Notifier(roster, {
  viewing: (pane) => pane === active && phoneView === "terminal" && document.visibilityState === "visible",
  onOpen: (pane) => openPane(pane),
});

// The session this tab shows the person now, or null (for rosterd's pushes: see settings.js).
function sessionInView() {
  if (!active || showingDeck() || document.visibilityState !== "visible") return null;
  const record = roster.recordOf(active);
  return record ? record.session_key : null;
}

const settings = new Settings($("settings"), { session: sessionInView });

function showingDeck() {
  return PHONE.matches && phoneView === "deck";
}

function render() {
  document.body.classList.toggle("phone", PHONE.matches);
  document.body.dataset.phoneView = phoneView;
  renderSidebar($("sessions"), roster.rows(), { active, onOpen: openPane });
  if (PHONE.matches) renderCards($("cards"), roster.rows(), { tails, onOpen: openPane });
  renderTabs();
  const link = $("link");
  link.dataset.connected = roster.connected ? "yes" : "no";
  link.textContent = roster.connected ? "live" : "offline";
}

function renderTabs() {
  const names = new Map(roster.rows().map((row) => [row.pane, row.name]));
  const tabs = [];
  for (const [pane, { view }] of open) {
    const tab = document.createElement("div");
    tab.className = "tab";
    tab.setAttribute("role", "tab");
    tab.dataset.pane = pane;
    tab.dataset.view = view.state;
    tab.setAttribute("aria-selected", pane === active ? "true" : "false");
    tab.title = view.reason || pane;
    const label = document.createElement("span");
    label.className = "name";
    label.textContent = names.get(pane) || pane;
    const close = document.createElement("button");
    close.className = "close";
    close.type = "button";
    close.title = "Close this tab (the session keeps running)";
    close.textContent = "×";
    close.addEventListener("click", (event) => {
      event.stopPropagation();
      closeTab(pane);
    });
    tab.append(label, badge(roster.stateOf(pane)), close);
    tab.addEventListener("click", () => activate(pane));
    tabs.push(tab);
  }
  $("tabs").replaceChildren(...tabs);
  $("empty").hidden = open.size > 0;
  const title = $("phone-title");
  title.replaceChildren();
  if (active) title.append(names.get(active) || active, " ", badge(roster.stateOf(active)));
}

function openPane(pane) {
  // Shown before the terminal opens (on a phone too), so it can measure the box it fits.
  phoneView = "terminal";
  document.body.dataset.phoneView = phoneView;
  if (!open.has(pane)) {
    const box = document.createElement("div");
    box.className = "view";
    box.dataset.pane = pane;
    const note = document.createElement("div");
    note.className = "note";
    box.append(note);
    $("views").append(box);
    // Visible before the terminal opens, so it can measure the box it fits.
    showOnly(pane, box);
    const view = new TerminalView(pane, box, { filter: (data) => keys.filter(data) });
    view.addEventListener("state", () => {
      note.textContent = view.state === "closed" ? `[closed: ${view.reason}]` : view.state === "disconnected" ? view.reason : "";
      // A closed pane leaves the list of terminals (the change stream says when); the tab
      // stays, marked, until closed.
      renderTabs();
    });
    open.set(pane, { view, box });
  }
  activate(pane);
}

function showOnly(pane, extra = null) {
  for (const [other, { box }] of open) box.hidden = other !== pane;
  if (extra) extra.hidden = false;
}

function activate(pane) {
  active = pane;
  phoneView = "terminal";
  notifier.seen(pane);
  const record = roster.recordOf(pane);
  if (record) markSeen(record.session_key);
  showOnly(pane);
  render();
  settings.viewing();
  open.get(pane).view.focus();
}

function closeTab(pane) {
  const entry = open.get(pane);
  if (!entry) return;
  entry.view.dispose();
  entry.box.remove();
  open.delete(pane);
  if (active === pane) {
    const next = [...open.keys()].pop() || null;
    if (next) activate(next);
    else active = null;
  }
  if (!active) phoneView = "deck";
  render();
  settings.viewing();
}

function backToDeck() {
  phoneView = "deck";
  render();
  settings.viewing();
  tails.refresh().catch(() => {});
}

async function launched(pane) {
  await roster.refreshTerminals();
  openPane(pane);
}

const launcher = new Launcher($("launcher"), { onLaunched: launched });
for (const button of document.querySelectorAll(".new-session")) {
  button.addEventListener("click", () => launcher.open().catch((error) => console.warn(error)));
}
$("back").addEventListener("click", backToDeck);

let tailSoon = null;
roster.addEventListener("change", () => {
  render();
  // A card's last lines follow its session: read them again shortly after the roster moves.
  if (showingDeck()) {
    clearTimeout(tailSoon);
    tailSoon = setTimeout(() => tails.refresh().catch(() => {}), 300);
  }
});
tails.addEventListener("change", () => {
  if (PHONE.matches) renderCards($("cards"), roster.rows(), { tails, onOpen: openPane });
});
PHONE.addEventListener("change", render);

async function main() {
  try {
    await roster.start();
  } catch (error) {
    if (error instanceof Unauthorized) {
      location.assign("/login");
      return;
    }
    throw error;
  }
  document.addEventListener("visibilitychange", () => {
    settings.viewing();
    if (document.hidden) return;
    if (active && phoneView === "terminal") notifier.seen(active);
  });
  tails.start(() => [...roster.terminals.keys()], showingDeck);
  settings.start().catch((error) => console.warn("settings:", error));
  // A notification clicked while no Roost window was open opened this one with ?open=KEY.
  const asked = new URLSearchParams(location.search).get("open");
  if (asked) {
    history.replaceState(null, "", "/");
    openSession(asked);
  }
}

// Open the terminal of session `key` (a clicked desktop notification names a session).
function openSession(key) {
  const record = roster.records.get(key);
  const pane = record ? notifier.paneOf(record) : null;
  if (pane) openPane(pane);
}

// The service worker keeps the app's shell so it installs to a home screen (see sw.js).
if ("serviceWorker" in navigator) {
  navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch((error) => console.warn("service worker:", error));
  navigator.serviceWorker.addEventListener("message", (event) => {
    const doc = event.data || {};
    if (doc.type === "open-session" && typeof doc.session_key === "string") openSession(doc.session_key);
  });
}

// For people poking at the page in devtools, and for the browser tests.
window.roost = { roster, open, keys, tails, notifier, settings };
main();
