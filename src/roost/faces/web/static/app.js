// The page: the sidebar of sessions, the tabs of open ones, and the view of the active tab (a
// terminal, or a headless session's panel); on a phone, a deck of session cards instead, and
// one view full screen (a terminal under a key row). State lives in the roster (roster.js) and
// the open views (terminal.js, headless.js); this module only wires them to the page and
// re-renders when either changes. Tabs, rows and cards are named by id: a terminal's pane, or a
// headless session's key, or (in a swarm) another node's terminal ("NODE_ID/%N"), which opens
// through this node, or the key of its headless session; actions on another node's session go
// to /swarm/{node}/sessions/….
//
// What kind of view a tab holds (a terminal, or a headless session's panel) is decided once,
// when it opens, and kept with it: the roster forgets a session that ended (another node's
// above all), and a tab left open on it must still be handled as what it is.

import { sessionPath } from "./api.js";
import { badge } from "./badges.js";
import { renderCards, Tails } from "./cards.js";
import { CostDialog } from "./cost.js";
import { ForkDialog } from "./fork.js";
import { Gates } from "./gates.js";
import { HeadlessView } from "./headless.js";
import { KeyRow } from "./keys.js";
import { Launcher } from "./launcher.js";
import { Notifier } from "./notify.js";
import { isPane, remotePaneOf, Roster, stateOf, Unauthorized } from "./roster.js";
import { markSeen, Settings } from "./settings.js";
import { showRequest } from "./request.js";
import { renderSidebar } from "./sidebar.js";
import { TerminalView } from "./terminal.js";

const PHONE = matchMedia("(max-width: 699px)");

const roster = new Roster();
const open = new Map(); // id -> { view, box, kind: "terminal" | "headless" }
const tails = new Tails();
const gates = new Gates();
const gateCommand = (record) => gates.commandFor(record);
let active = null;
// On a phone one thing shows at a time: the deck of cards, or the active terminal.
let phoneView = "deck";

const $ = (id) => document.getElementById(id);
const keys = new KeyRow($("keys"), {
  target: () => (kindOf(active) === "terminal" ? open.get(active).view : null),
});

// The kind of the open view `id`, or null when no tab holds it.
function kindOf(id) {
  const entry = id ? open.get(id) : null;
  return entry ? entry.kind : null;
}
// A session counts as seen while it is this tab's active terminal and the tab is in view.
const notifier = new Notifier(roster, {
  viewing: (id) => id === active && phoneView === "terminal" && document.visibilityState === "visible",
  onOpen: (id) => openView(id),
});

// The session this tab shows the person now, or null (for rosterd's pushes: see settings.js).
function sessionInView() {
  if (!active || showingDeck() || document.visibilityState !== "visible") return null;
  const record = roster.recordOf(active);
  return record ? record.session_key : null;
}

const settings = new Settings($("settings"), { session: sessionInView });
const cost = new CostDialog($("cost"), { swarm: () => roster.nodes() !== null });
for (const button of document.querySelectorAll(".open-cost")) {
  button.addEventListener("click", () => cost.open().catch((error) => console.warn("cost:", error)));
}

function showingDeck() {
  return PHONE.matches && phoneView === "deck";
}

function render() {
  document.body.classList.toggle("phone", PHONE.matches);
  document.body.dataset.phoneView = phoneView;
  document.body.dataset.activeKind = kindOf(active) === "headless" ? "headless" : "terminal";
  const nodes = roster.nodes();
  const rows = roster.rows();
  const how = { active, onOpen: openView, onAnswered: answered, onToggle: render, gateCommand, nodes };
  renderSidebar($("sessions"), rows, how);
  if (PHONE.matches) renderDeck(rows);
  renderTabs();
  const link = $("link");
  link.dataset.connected = roster.connected ? "yes" : "no";
  link.textContent = roster.connected ? "live" : "offline";
}

// The roster's changes drawn once a frame at most: a swarm's stream may bring dozens a second,
// and each draw reads every row.
let drawing = 0;
function renderSoon() {
  if (!drawing) {
    drawing = requestAnimationFrame(() => {
      drawing = 0;
      render();
    });
  }
}

function renderDeck(rows = roster.rows()) {
  renderCards($("cards"), rows, {
    tails,
    recordOf: (id) => roster.recordOf(id),
    onOpen: openView,
    onAnswered: answered,
    onToggle: render,
    gateCommand,
    nodes: roster.nodes(),
  });
}

function renderTabs() {
  const tabs = [];
  for (const [id, { view }] of open) {
    const tab = document.createElement("div");
    tab.className = "tab";
    tab.setAttribute("role", "tab");
    if (isPane(id)) tab.dataset.pane = id;
    else tab.dataset.session = id;
    tab.dataset.view = view.state;
    tab.setAttribute("aria-selected", id === active ? "true" : "false");
    tab.title = view.reason || id;
    const label = document.createElement("span");
    label.className = "name";
    label.textContent = roster.nameOf(id);
    const close = document.createElement("button");
    close.className = "close";
    close.type = "button";
    close.title = "Close this tab (the session keeps running)";
    close.textContent = "×";
    close.addEventListener("click", (event) => {
      event.stopPropagation();
      closeTab(id);
    });
    tab.append(label, badge(roster.stateOf(id)));
    const fork = forkButton(id);
    if (fork) tab.append(fork);
    tab.append(close);
    tab.addEventListener("click", () => activate(id));
    tabs.push(tab);
  }
  $("tabs").replaceChildren(...tabs);
  $("empty").hidden = open.size > 0;
  const title = $("phone-title");
  title.replaceChildren();
  if (active) title.append(roster.nameOf(active), " ", badge(roster.stateOf(active)));
}

// "⑂" on a tab whose session holds a conversation (an agent that said its session id) and has
// not ended: it opens the Fork dialog for that session.
function forkButton(id) {
  const record = roster.recordOf(id);
  if (!record || !record.session_id || record.liveness === "ended") return null;
  const button = document.createElement("button");
  button.className = "fork";
  button.type = "button";
  button.title = "Fork: a new session from this one's conversation";
  button.setAttribute("aria-label", "Fork this session");
  button.textContent = "⑂";
  // A pane of this node is named by its %N; any other session by its routes (another node's too).
  const remote = Boolean(record.peer_state && record.peer_state !== "local");
  const path = isPane(id) && !remote ? `/sessions/${encodeURIComponent(id)}` : sessionPath(record);
  button.addEventListener("click", (event) => {
    event.stopPropagation();
    forker.open(path, roster.nameOf(id), remote);
  });
  return button;
}

function openView(id) {
  // Shown before the terminal opens (on a phone too), so it can measure the box it fits.
  phoneView = "terminal";
  document.body.dataset.phoneView = phoneView;
  if (!open.has(id)) {
    const box = document.createElement("div");
    box.className = "view";
    if (isPane(id)) box.dataset.pane = id;
    else box.dataset.session = id;
    const note = document.createElement("div");
    note.className = "note";
    box.append(note);
    const kind = roster.isTerminal(id) ? "terminal" : "headless";
    box.dataset.kind = kind;
    if (kind === "terminal") {
      // What the pane's session waits on, above the terminal (over it, it would hide the
      // agent's first lines): a notification opens straight onto it (updateRequests keeps it
      // current).
      const bar = document.createElement("div");
      bar.className = "request-bar";
      box.append(bar);
    }
    $("views").append(box);
    // Visible before the terminal opens, so it can measure the box it fits.
    showOnly(id, box);
    const view = kind === "terminal" ? terminalView(id, box) : headlessView(id, box);
    view.addEventListener("state", () => {
      note.textContent = view.state === "closed" ? `[closed: ${view.reason}]` : view.state === "disconnected" ? view.reason : "";
      // A closed pane leaves the list of terminals (the change stream says when); the tab
      // stays, marked, until closed.
      renderTabs();
    });
    open.set(id, { view, box, kind });
    updateRequests();
  }
  activate(id);
}

// An answer's record goes to the roster at once; the change stream confirms it.
function answered(record) {
  roster.offer(record);
}

// Each open terminal's request bar shows what its session waits on now, or nothing.
function updateRequests() {
  for (const [id, { box }] of open) {
    const bar = box.querySelector(":scope > .request-bar");
    if (bar) showRequest(bar, roster.recordOf(id), { onAnswered: answered, gateCommand });
  }
}

// A pane of this node, or of another node (its WebSocket relayed by this node).
function terminalView(id, box) {
  const where = remotePaneOf(id);
  const path = where
    ? `/ws/swarm/${encodeURIComponent(where.node_id)}/terminal/${encodeURIComponent(where.pane)}`
    : undefined;
  return new TerminalView(id, box, { filter: (data) => keys.filter(data), path });
}

function headlessView(key, box) {
  const record = roster.recordOf(key);
  const path = record ? sessionPath(record) : undefined;
  const view = new HeadlessView(key, box, {
    onRecord: (record) => roster.offer(record),
    stateOf: (record) => stateOf(record, roster.seen),
    path,
  });
  view.update(roster.recordOf(key));
  return view;
}

// A headless view shows its session's record: hand it each new one.
function updateHeadless() {
  for (const [id, { view, kind }] of open) if (kind === "headless") view.update(roster.recordOf(id));
}

function showOnly(id, extra = null) {
  for (const [other, { box }] of open) box.hidden = other !== id;
  if (extra) extra.hidden = false;
}

function activate(id) {
  active = id;
  phoneView = "terminal";
  notifier.seen(id);
  roster.markSeen(id);
  const record = roster.recordOf(id);
  if (record) markSeen(record.session_key);
  showOnly(id);
  render();
  settings.viewing();
  open.get(id).view.focus();
}

function closeTab(id) {
  const entry = open.get(id);
  if (!entry) return;
  entry.view.dispose();
  entry.box.remove();
  open.delete(id);
  if (active === id) {
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
  openView(pane);
}

function started(record) {
  roster.offer(record);
  openView(record.session_key);
}

const launcher = new Launcher($("launcher"), { onLaunched: launched, onStarted: started });

// A fork on this node opens in a tab of its own: a headless one by its record, a pane by its %N.
// Another node's fork reaches the roster, and its row, a moment later.
async function forked(answer, remote) {
  if (remote) return;
  if (answer.record) started(answer.record);
  else if (answer.pane) await launched(answer.pane);
}
const forker = new ForkDialog($("fork"), { onForked: forked });
for (const button of document.querySelectorAll(".new-session")) {
  button.addEventListener("click", () => launcher.open().catch((error) => console.warn(error)));
}
$("back").addEventListener("click", backToDeck);

let tailSoon = null;
roster.addEventListener("change", (event) => {
  // A turn that ends while the person watches its session is seen as it ends.
  if (active && notifier.viewing(active)) roster.markSeen(active);
  updateHeadless();
  updateRequests();
  renderSoon();
  gates.watch((event.detail && event.detail.records) || roster.allRecords());
  // A card's last lines follow its session: read them again shortly after the roster moves.
  if (showingDeck()) {
    clearTimeout(tailSoon);
    tailSoon = setTimeout(() => tails.refresh().catch(() => {}), 300);
  }
});
gates.addEventListener("change", () => {
  updateRequests();
  render();
});
tails.addEventListener("change", () => {
  if (PHONE.matches) renderDeck();
});
PHONE.addEventListener("change", render);
// A node served from its last frame says how old that is: keep the age current.
setInterval(() => {
  if ((roster.nodes() || []).some((node) => node.peer_state === "unreachable")) render();
}, 5000);

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
    if (active && phoneView === "terminal") {
      notifier.seen(active);
      roster.markSeen(active);
    }
  });
  tails.start(() => [...roster.terminals.keys(), ...roster.remotePanes()], showingDeck);
  gates.refresh().catch((error) => console.warn("gates:", error.message));
  settings.start().catch((error) => console.warn("settings:", error));
  // A notification clicked while no Roost window was open opened this one with ?open=KEY.
  const asked = new URLSearchParams(location.search).get("open");
  if (asked) {
    history.replaceState(null, "", "/");
    openSession(asked);
  }
}

// Open the view of session `key` (a clicked desktop notification names a session).
function openSession(key) {
  const record = roster.records.get(key) || roster.remote.get(key);
  const id = record ? notifier.viewOf(record) : null;
  if (id) openView(id);
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
window.roost = { roster, open, keys, tails, notifier, settings, gates };
main();
