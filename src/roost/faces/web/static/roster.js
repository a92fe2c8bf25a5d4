// The roster as the page knows it: every terminal of roost's tmux server (GET /terminals),
// with the state of the session in it, kept current by the roster's change stream
// (GET /changes, server-sent events). Badges move only when the stream says so: nothing polls.
// The same stream also says when to read the terminal list again (?terminals=1): tmux's
// panes, windows and sessions coming, going or being renamed, which the roster does not
// report for a plain shell.
//
// A session's state is one of the words a person reads everywhere (badges.js shows them):
// working, blocked ("needs input"), error, done or idle: the record's state, which is what
// `roost status`, `rosterd list` and the pane's badge say, except that a done this browser has
// shown the person reads idle (seen.js). A record with no state (an older peer's) says it by
// its activity: working and blocked, and for an idle one error (its error_reason), done (a
// turn ended, not shown here yet) or idle. A terminal with no live record, or one whose
// activity is unknown, has no state: unmarked.
//
// Headless sessions (lane "headless": run over ACP by rosterd's runner, no terminal) are rows
// too, named by their session key where a terminal is named by its pane ("%N"). The last
// record of each is kept after it ends, so a view left open on it can say it ended.
//
// In a swarm (GET /swarm/nodes names one), the page also reads the union roster
// (GET /swarm/snapshot) and follows its changes from there (GET /swarm/changes?since=: one
// change a frame, each resumed from its id when the stream reconnects, or the union again when
// the node can no longer replay from there) and keeps every other node's sessions beside this
// node's own, with each node's standing
// (reachable, or unreachable and served from its last frame, with its age). Another node's
// rows are made as this node's are: one per terminal it lists (its union row's `terminals`,
// plain shells too, which no roster holds), with the session in that pane, named
// "NODE_ID/%N", and one per headless session, named by its key. A node that lists no terminals
// (an older roost) shows its sessions that have a pane instead. With no swarm nothing of this
// is asked for again and the page is as it always was.

import { LABELS } from "./badges.js";
import { Seen } from "./seen.js";

const BUSY = { active: "working", needs_attention: "blocked" };
const HERE = ""; // what changed() calls this node: no other node's id is empty
// The change events of a session, on /changes and /swarm/changes alike.
const SESSION_CHANGES = [
  "session_started", "session_ended", "session_suspended", "attention", "attention_cleared", "activity", "renamed",
  "updated",
];

// The state `record` is in, as a person reads it; `seen`: which finished turns were shown. The
// pane's badge turns done into idle when a person looks at the pane in tmux; a look from this
// page is none (its view is a control client, which roost's tmux config never takes for a
// person's focus), so the page keeps its own, and says idle for a done it showed.
export function stateOf(record, seen) {
  if (!record) return null;
  const state = Object.hasOwn(LABELS, record.state) ? record.state : byActivity(record);
  return state === "done" && seen.shown(record) ? "idle" : state;
}

// The state of a record from a peer older than the record's state field, by its activity.
function byActivity(record) {
  if (record.activity in BUSY) return BUSY[record.activity];
  if (record.activity !== "idle") return null;
  if (record.error_reason) return "error";
  return record.completed_revision ? "done" : "idle";
}

export class Unauthorized extends Error {}

async function getJSON(path) {
  const response = await fetch(path, { credentials: "same-origin", cache: "no-store" });
  if (response.status === 401) throw new Unauthorized(path);
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return response.json();
}

// A row's id is its pane for a terminal ("%N"), its session key for a headless session, and
// "NODE_ID/%N" for a terminal of another node (no session key holds a "/").
export function isPane(id) {
  return id.startsWith("%");
}

export function remotePaneId(nodeId, pane) {
  return `${nodeId}/${pane}`;
}

// The node and pane of another node's terminal row, or null for any other id.
export function remotePaneOf(id) {
  const at = id.lastIndexOf("/%");
  return at > 0 ? { node_id: id.slice(0, at), pane: id.slice(at + 1) } : null;
}

// The newest record (occupant ids only grow) of `records` in `pane`, or null.
function newestIn(records, pane) {
  let found = null;
  for (const record of records) {
    if ((record.tmux || {}).pane !== pane || record.lane === "headless") continue;
    if (found === null || record.occupant_id > found.occupant_id) found = record;
  }
  return found;
}

function paneOf(record, socket) {
  const tmux = record.tmux || {};
  return typeof tmux.pane === "string" && tmux.socket === socket ? tmux.pane : null;
}

export class Roster extends EventTarget {
  constructor() {
    super();
    this.terminals = new Map(); // pane -> terminal from /terminals
    this.records = new Map(); // session_key -> live record
    this.headless = new Map(); // session_key -> a headless session's last record, ended too
    this.socket = null; // roost's tmux socket, learnt from the records that name a pane
    this.swarm = null; // in a swarm: { node_id, nodes: node_id -> its row and when heard }, else null
    this.remote = new Map(); // session_key -> another node's record, as the union last said
    this.byNode = new Map(); // node_id -> (session_key -> record): this.remote, by node
    this.nodeRows = new Map(); // node_id -> its rows, made since its last change
    this.swarmSource = null;
    this.connected = false;
    this.source = null;
    this.asked = 0; // listings asked for, and the newest one applied: a slow answer never
    this.applied = 0; // overwrites a newer one
    this.seen = new Seen();
    this.seen.addEventListener("change", () => this.changed());
  }

  // The person sees the view `id` now: the turn its session last finished reads idle, not done.
  markSeen(id) {
    const record = this.recordOf(id);
    if (record) this.seen.mark(record, () => this.allRecords().map((live) => live.session_key));
  }

  // This node's roster and, in a swarm, the union, each read while the other is.
  async start() {
    await Promise.all([this.startHere(), this.joinSwarm()]);
  }

  // Load the terminals and the snapshot, then follow the change stream from the snapshot's seq.
  async startHere() {
    const [listing, snapshot] = await Promise.all([getJSON("/terminals"), getJSON("/snapshot")]);
    this.setTerminals(listing);
    this.setSnapshot(snapshot);
    this.follow(`${snapshot.status_epoch}:${snapshot.seq}`);
  }

  // Follow the union roster when this node is in a swarm (a daemon that runs none answers 503).
  async joinSwarm() {
    let union;
    try {
      const nodes = await getJSON("/swarm/nodes");
      if (!nodes.swarm_id) return;
      union = await getJSON("/swarm/snapshot");
    } catch (error) {
      if (error instanceof Unauthorized) throw error;
      return;
    }
    this.setUnion(union);
    // One change a frame from the union's cursor, not the union per change (/swarm/events): in
    // a swarm of fifty thousand sessions the union is some 40 MB, and a change is a record. The
    // union is read by fetch, not as the stream's first frame: Chromium parses an event stream
    // on the page's main thread and DevTools copies every event whole, which made the page's
    // first paint of a 41 MB union about a second slower (bench/README.md). EventSource resumes
    // from the last id it read; a cursor the node cannot replay is answered with the union.
    const since = encodeURIComponent(`${union.status_epoch}:${union.seq}`);
    const source = new EventSource(`/swarm/changes?since=${since}`);
    this.swarmSource = source;
    const read = (handle) => (event) => handle.call(this, JSON.parse(event.data));
    source.addEventListener("snapshot", read((doc) => this.setUnion(doc.snapshot)));
    for (const name of SESSION_CHANGES) source.addEventListener(name, read(this.swarmRecord));
    source.addEventListener("node", read(this.nodeStanding));
    source.addEventListener("node_left", read(this.nodeLeft));
    source.addEventListener("terminals", read(this.nodeTerminals));
  }

  // The union (GET /swarm/snapshot, or a /swarm/changes snapshot): every node's standing, and
  // the other nodes' records.
  setUnion(union) {
    const heard = performance.now();
    const nodes = new Map(union.nodes.map((node) => [node.node_id, { ...node, heard }]));
    this.swarm = { node_id: union.node_id, nodes };
    this.remote = new Map();
    this.byNode = new Map();
    for (const record of union.records) {
      if (record.peer_state !== "local") this.putRemote(record);
    }
    this.changed();
  }

  putRemote(record) {
    const key = record.session_key;
    if (record.lane === "headless") this.headless.set(key, record);
    const held = this.remote.get(key);
    if (held && held.node_id !== record.node_id) this.byNode.get(held.node_id)?.delete(key);
    if (record.liveness === "ended") {
      this.remote.delete(key);
      this.byNode.get(record.node_id)?.delete(key);
      return;
    }
    this.remote.set(key, record);
    if (!this.byNode.has(record.node_id)) this.byNode.set(record.node_id, new Map());
    this.byNode.get(record.node_id).set(key, record);
  }

  // A session of another node changed (this node's own come on /changes).
  swarmRecord(doc) {
    if (!this.swarm || !doc.record || doc.node_id === this.swarm.node_id) return;
    this.putRemote(doc.record);
    this.changed({ node: doc.node_id, records: [doc.record] });
  }

  // A node was heard from first, lost or back: its standing, its count and its age.
  nodeStanding(doc) {
    if (!this.swarm) return;
    const held = this.swarm.nodes.get(doc.node_id) || { terminals: null };
    const { node, node_id, peer_state, peer_age_ms, sessions, dropped } = doc;
    const heard = performance.now();
    this.swarm.nodes.set(node_id, { ...held, node, node_id, peer_state, peer_age_ms, sessions, dropped, heard });
    this.changed({ node: node_id, records: [] });
  }

  // A node's records left the union (revoked, left, expired); this node revoked drops every peer.
  nodeLeft(doc) {
    if (!this.swarm) return;
    const own = this.swarm.node_id;
    const gone = doc.reason === "this_node_revoked" ? [...this.swarm.nodes.keys()] : [doc.node_id];
    for (const id of gone) {
      if (id === own) continue;
      this.swarm.nodes.delete(id);
      for (const key of (this.byNode.get(id) || new Map()).keys()) this.remote.delete(key);
      this.byNode.delete(id);
    }
    this.changed();
  }

  // A node's terminal list changed: the whole new list.
  nodeTerminals(doc) {
    const node = this.swarm && this.swarm.nodes.get(doc.node_id);
    if (!node) return;
    node.terminals = doc.terminals;
    this.changed({ node: doc.node_id, records: [] });
  }

  // Every node of the swarm (this one first) with its standing and, for an unreachable one, the
  // age of what is shown of it now; null with no swarm.
  nodes() {
    if (!this.swarm) return null;
    const now = performance.now();
    return [...this.swarm.nodes.values()].map(({ heard, ...node }) => ({
      ...node,
      self: node.node_id === this.swarm.node_id,
      age_ms: node.peer_state === "unreachable" ? node.peer_age_ms + (now - heard) : 0,
    }));
  }

  // Whether the view of `id` is a terminal: one of this node's panes, or another node's
  // (opened through this node: see terminal.js).
  isTerminal(id) {
    return isPane(id) || remotePaneOf(id) !== null;
  }

  // Every other node's terminal this page lists, by row id (the card deck reads their last lines).
  remotePanes() {
    return this.rows()
      .filter((row) => row.remotePane)
      .map((row) => row.id);
  }

  // Every live record of every node, for whoever watches them all (notify.js).
  allRecords() {
    return [...this.records.values(), ...this.remote.values()];
  }

  async refreshTerminals() {
    const asked = ++this.asked;
    const listing = await getJSON("/terminals");
    if (asked < this.applied) return;
    this.applied = asked;
    this.setTerminals(listing);
  }

  setTerminals(listing) {
    this.socket = listing.socket;
    this.terminals = new Map(listing.terminals.map((t) => [t.pane, t]));
    this.changed({ node: HERE, records: [] });
  }

  setSnapshot(snapshot) {
    this.records = new Map();
    for (const record of snapshot.records) this.put(record);
    this.changed({ node: HERE });
  }

  put(record) {
    if (record.lane === "headless") this.headless.set(record.session_key, record);
    if (record.liveness === "ended") this.records.delete(record.session_key);
    else this.records.set(record.session_key, record);
  }

  // A record an action's answer carried; the change stream may have brought a newer one first.
  offer(record) {
    const held = this.records.get(record.session_key) || this.headless.get(record.session_key);
    if (held && held.status_epoch === record.status_epoch && held.revision > record.revision) return;
    this.put(record);
    this.changed({ node: HERE, records: [record] });
  }

  follow(since) {
    // EventSource sends the cookie (same origin) and, on reconnecting, Last-Event-ID.
    const source = new EventSource(`/changes?since=${encodeURIComponent(since)}&terminals=1`);
    this.source = source;
    // First on every connect, then after each change of tmux's layout: list the terminals again.
    source.addEventListener("terminals", () => this.refreshTerminals().catch(() => {}));
    source.addEventListener("open", () => this.setConnected(true));
    source.addEventListener("error", () => this.setConnected(false));
    source.addEventListener("snapshot", (event) => this.setSnapshot(JSON.parse(event.data).snapshot));
    const change = (event) => {
      const doc = JSON.parse(event.data);
      if (!doc.record) return;
      const pane = paneOf(doc.record, this.socket);
      this.put(doc.record);
      this.changed({ node: HERE, records: [doc.record] });
      // A session in a terminal this page has not listed yet, or one that ended (its terminal
      // may have gone with it): the terminal list is stale.
      const stale = pane && (!this.terminals.has(pane) || event.type === "session_ended");
      if (stale) this.refreshTerminals().catch(() => {});
    };
    for (const name of SESSION_CHANGES) source.addEventListener(name, change);
  }

  setConnected(value) {
    if (this.connected === value) return;
    this.connected = value;
    this.changed({ node: HERE, records: [] });
  }

  // Every change of what the roster holds comes through here. It makes the rows stale: every
  // node's, or `node`'s alone (HERE: this node's, which are made again on each change anyway).
  // Its event's detail.records are the records it changed, or null when any may have: a
  // watcher of every session (notify.js) then looks at those alone, not at fifty thousand.
  changed({ node = null, records = null } = {}) {
    this.version = (this.version || 0) + 1;
    if (node === null) this.nodeRows.clear();
    else this.nodeRows.delete(node);
    this.dispatchEvent(new CustomEvent("change", { detail: { records } }));
  }

  // A headless session's last record, or the newest live record in a pane (occupant ids only
  // grow), as status-row code does.
  recordOf(id) {
    const where = remotePaneOf(id);
    if (where) return newestIn((this.byNode.get(where.node_id) || new Map()).values(), where.pane);
    if (!isPane(id)) return this.remote.get(id) || this.headless.get(id) || null;
    const pane = id;
    let found = null;
    for (const record of this.records.values()) {
      if (paneOf(record, this.socket) !== pane) continue;
      if (found === null || record.occupant_id > found.occupant_id) found = record;
    }
    return found;
  }

  stateOf(id) {
    return stateOf(this.recordOf(id), this.seen);
  }

  // What the page calls the view `id`: its row's name (a terminal's window when its session
  // has no name), else its record's, else the id.
  nameOf(id) {
    const row = this.rows().find((candidate) => candidate.id === id);
    const record = isPane(id) ? null : this.recordOf(id);
    return (row && row.name) || (record && record.name) || id;
  }

  // What the sidebar shows: one row per terminal and per headless session not ended, named and
  // placed by folder, each with its record (null for a terminal no session occupies); in a
  // swarm, every other node's terminals and sessions too, and each row with the id of its node.
  // Made once for each change of the roster (a page draws, names tabs and finds rows many times
  // between two), and another node's rows only when that node changed: in a swarm of fifty
  // thousand sessions, remaking every row for each change would take most of the page's time.
  rows() {
    const version = this.version || 0;
    if (this.made && this.made.version === version) return this.made.rows;
    const own = this.swarm ? this.swarm.node_id : null;
    const rows = this.localRows().map((row) => ({ ...row, node_id: own }));
    const grouped = new Map([[own, [...rows]]]);
    for (const node of this.swarm ? this.swarm.nodes.values() : []) {
      if (node.node_id === own) continue;
      if (!this.nodeRows.has(node.node_id)) {
        const records = [...(this.byNode.get(node.node_id) || new Map()).values()];
        this.nodeRows.set(node.node_id, this.remoteRows(node, records));
      }
      const made = this.nodeRows.get(node.node_id);
      grouped.set(node.node_id, made);
      for (const row of made) rows.push(row);
    }
    // Each node's rows as made (the same array until the node changes), for a draw by node.
    Object.defineProperty(rows, "grouped", { value: grouped });
    this.made = { version, rows };
    return rows;
  }

  // Another node's rows (`records`: its records), made as this node's are: a row per terminal it
  // lists, with the session in that pane; a session in a pane the list does not hold (the list
  // follows tmux, the roster the agents, and either may be first), or any, from a node that
  // lists none; its headless sessions.
  remoteRows(node, records) {
    const listed = node.terminals || [];
    const panes = new Set(listed.map((terminal) => terminal.pane));
    const unlisted = new Set(
      records
        .filter((record) => record.lane !== "headless" && record.tmux && record.tmux.pane)
        .map((record) => record.tmux.pane)
        .filter((pane) => !panes.has(pane)),
    );
    const occupant = (pane) => newestIn(records, pane);
    return [
      ...listed.map((terminal) => this.remoteTerminalRow(node, terminal, occupant(terminal.pane))),
      ...[...unlisted].map((pane) => this.remoteTerminalRow(node, this.terminalOf(occupant(pane)), occupant(pane))),
      ...records.filter((record) => record.lane === "headless").map((record) => this.remoteHeadlessRow(record)),
    ];
  }

  // What a session's own record says of its pane, for a pane its node has not listed.
  terminalOf(record) {
    const tmux = record.tmux || {};
    return { pane: tmux.pane, session: tmux.session || "", window: tmux.window_name || "", name: null, command: "" };
  }

  remoteTerminalRow(node, terminal, record) {
    return {
      id: remotePaneId(node.node_id, terminal.pane),
      pane: null,
      remotePane: terminal.pane,
      node_id: node.node_id,
      name:
        (record && record.name) || terminal.name || terminal.window || terminal.command || terminal.pane,
      detail: `${node.node} · ${terminal.session}:${terminal.window} · ${terminal.pane}`,
      cwd: (record && record.cwd) || terminal.cwd || "",
      harness: record ? record.harness : null,
      state: stateOf(record, this.seen),
      record,
    };
  }

  remoteHeadlessRow(record) {
    return {
      id: record.session_key,
      pane: null,
      node_id: record.node_id,
      name: record.name || record.harness || record.session_key,
      detail: `${record.node} · ${record.liveness === "suspended" ? "headless · suspended" : "headless"}`,
      cwd: record.cwd || "",
      harness: record.harness,
      state: stateOf(record, this.seen),
      since: record.started_at,
      record,
    };
  }

  localRows() {
    const terminals = [...this.terminals.values()].map((terminal) => {
      const record = this.recordOf(terminal.pane);
      return {
        id: terminal.pane,
        pane: terminal.pane,
        name: (record && record.name) || terminal.name || terminal.window || terminal.command || terminal.pane,
        detail: `${terminal.session}:${terminal.window} · ${terminal.pane}`,
        cwd: (record && record.cwd) || terminal.cwd || "",
        harness: record ? record.harness : null,
        state: stateOf(record, this.seen),
        record,
      };
    });
    const headless = [...this.records.values()]
      .filter((record) => record.lane === "headless")
      .map((record) => ({
        id: record.session_key,
        pane: null,
        name: record.name || record.harness || record.session_key,
        detail: record.liveness === "suspended" ? "headless · suspended" : "headless",
        cwd: record.cwd || "",
        harness: record.harness,
        state: stateOf(record, this.seen),
        since: record.started_at,
        record,
      }));
    return [...terminals, ...headless];
  }
}
