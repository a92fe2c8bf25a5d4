// In-browser notifications: no permission needed. When a session the person is not looking at
// moves in the background — working -> needs input, or working|needs input -> done (error, when
// the turn failed) — one tab of
// this browser profile shows a toast (and, if asked for, plays a sound), and every tab counts it
// as unseen in its title: "(2) Roost". Opening the session clears its count in every tab.
//
// Once per profile: each tab sees the same change stream, so each would notify. A tab delivers
// only after claiming "<session>:<activity>:<when it began>". The claim is a Web Lock of that
// name, taken only if free and then held for a minute: the browser grants each lock to one tab
// at a time, which localStorage cannot promise (a tab in another renderer process may read it
// before another tab's write reaches it). The claim is also kept in localStorage for a tab that
// hears of the change later. The unseen counts live in localStorage too, and tabs tell each
// other over a BroadcastChannel to re-read them.
//
// In a swarm the sessions of every node are watched alike (roster.allRecords()): another node's
// session notifies as this node's does, and its toast opens its view (its pane, or a headless
// session by its key).

import { remotePaneId } from "./roster.js";

const BACKGROUND = {
  // previous activity -> new activity -> what the toast says. Idle -> needs input too: only a
  // running turn asks for a permission, but a page can hear a turn's start and its request in
  // one batch (another node's changes come through the union) and see only where it ended.
  active: { needs_attention: "needs input", idle: "done" },
  idle: { needs_attention: "needs input" },
  needs_attention: { idle: "done" },
};
const CLAIMS = "roost-notify-claims";
const UNSEEN = "roost-notify-unseen";
const SOUND = "roost-notify-sound";
const LOCK = "roost-notify";
const CHANNEL = "roost-notify";
const CLAIMS_KEPT = 200;
const CLAIM_HOLD_MS = 60000;
const TOAST_MS = 8000;
const TITLE = "Roost";

// What a record moving from `before` to `after` is worth telling, or null; a turn that ended
// `failed` is told as an error, not done.
export function backgroundTransition(before, after, failed = false) {
  const what = (BACKGROUND[before] || {})[after] || null;
  return what === "done" && failed ? "error" : what;
}

function readJSON(key, fallback) {
  try {
    return JSON.parse(localStorage.getItem(key)) || fallback;
  } catch {
    return fallback;
  }
}

export function soundOn() {
  return localStorage.getItem(SOUND) === "on";
}

export function setSound(on) {
  if (on) localStorage.setItem(SOUND, "on");
  else localStorage.removeItem(SOUND);
}

function beep() {
  const audio = new AudioContext();
  const tone = audio.createOscillator();
  const gain = audio.createGain();
  tone.frequency.value = 880;
  gain.gain.setValueAtTime(0.15, audio.currentTime);
  gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.3);
  tone.connect(gain).connect(audio.destination);
  tone.start();
  tone.stop(audio.currentTime + 0.3);
  tone.addEventListener("ended", () => audio.close());
}

export class Notifier {
  // `viewing(id)`: is this tab showing that view (a pane, or a headless session's key) to the
  // person now; `onOpen(id)`: a toast was clicked.
  constructor(roster, { viewing, onOpen }) {
    this.roster = roster;
    this.viewing = viewing;
    this.onOpen = onOpen;
    this.activity = new Map(); // session_key -> the activity last seen
    this.box = document.createElement("div");
    this.box.id = "toasts";
    this.box.setAttribute("aria-live", "polite");
    document.body.append(this.box);
    this.channel = "BroadcastChannel" in window ? new BroadcastChannel(CHANNEL) : null;
    if (this.channel) this.channel.addEventListener("message", () => this.renderTitle());
    window.addEventListener("storage", (event) => {
      if (event.key === UNSEEN) this.renderTitle();
    });
    roster.addEventListener("change", (event) => this.observe(event.detail ? event.detail.records : null));
    this.renderTitle();
  }

  // Compare each record with the activity seen before: `changed`, the records the roster's
  // change named, or every record when it named none; a session seen for the first time (all
  // of them, on the first look) only teaches what it is doing.
  observe(changed = null) {
    const records = changed || this.roster.allRecords();
    for (const record of records) {
      const key = record.session_key;
      if (record.liveness === "ended") {
        this.activity.delete(key);
        continue;
      }
      const before = this.activity.get(key);
      this.activity.set(key, record.activity);
      if (before === undefined || before === record.activity) continue;
      const what = backgroundTransition(before, record.activity, Boolean(record.error_reason));
      if (what) this.transition(record, what).catch((error) => console.warn("notify:", error));
    }
    if (changed) return;
    const live = new Set(records.map((record) => record.session_key));
    for (const key of [...this.activity.keys()]) if (!live.has(key)) this.activity.delete(key);
  }

  // The id the page opens a session's view by: its pane (another node's as "NODE_ID/%N"), or a
  // headless session's own key.
  viewOf(record) {
    if (record.lane === "headless") return record.session_key;
    const tmux = record.tmux || {};
    if (this.roster.remote.has(record.session_key)) {
      return tmux.pane ? remotePaneId(record.node_id, tmux.pane) : record.session_key;
    }
    return tmux.socket === this.roster.socket ? tmux.pane || null : null;
  }

  async transition(record, what) {
    const id = this.viewOf(record);
    const seen = id !== null && this.viewing(id);
    // The tab showing the session claims it silently, so no other tab speaks up for it. The
    // claim names the activity, when it began and the turn that ended there, not the revision:
    // a later change that leaves the activity alone (a dialog's summary filled in) bumps the
    // revision, and a tab that first hears of the transition there must still find it
    // claimed. A badge's time is whole seconds: two turns that end within one second differ
    // by the turn (completed_revision) alone.
    const turn = record.completed_revision || 0;
    if (!(await this.claim(`${record.session_key}:${record.activity}:${turn}:${record.activity_at}`))) return;
    if (seen) return;
    this.bump(record.session_key, 1);
    this.toast(record, id, what);
    if (soundOn()) beep();
  }

  claim(id) {
    const take = () => {
      const claims = readJSON(CLAIMS, []);
      if (claims.includes(id)) return false;
      claims.push(id);
      localStorage.setItem(CLAIMS, JSON.stringify(claims.slice(-CLAIMS_KEPT)));
      return true;
    };
    if (!navigator.locks) return Promise.resolve(take());
    return new Promise((resolve) => {
      navigator.locks
        .request(`${LOCK}:${id}`, { ifAvailable: true }, async (lock) => {
          const won = lock !== null && take();
          resolve(won);
          if (won) await new Promise((done) => setTimeout(done, CLAIM_HOLD_MS));
        })
        .catch(() => resolve(take()));
    });
  }

  unseen() {
    return readJSON(UNSEEN, {});
  }

  bump(key, by) {
    const counts = this.unseen();
    counts[key] = (counts[key] || 0) + by;
    this.store(counts);
  }

  // The person opened the view `id`: its session's unseen count goes, in every tab.
  seen(id) {
    const counts = this.unseen();
    let changed = false;
    for (const record of this.roster.allRecords()) {
      const key = record.session_key;
      if (this.viewOf(record) === id && key in counts) {
        delete counts[key];
        changed = true;
      }
    }
    // A terminal's toasts carry its pane; a headless session's, its key (as every toast does).
    const marked = `.toast[data-pane="${CSS.escape(id)}"], .toast[data-session="${CSS.escape(id)}"]`;
    for (const toast of this.box.querySelectorAll(marked)) toast.remove();
    if (changed) this.store(counts);
  }

  store(counts) {
    localStorage.setItem(UNSEEN, JSON.stringify(counts));
    this.renderTitle();
    if (this.channel) this.channel.postMessage("unseen");
  }

  total() {
    return Object.values(this.unseen()).reduce((sum, n) => sum + n, 0);
  }

  renderTitle() {
    const total = this.total();
    document.title = total > 0 ? `(${total}) ${TITLE}` : TITLE;
  }

  toast(record, id, what) {
    const toast = document.createElement("button");
    toast.type = "button";
    toast.className = "toast";
    toast.dataset.session = record.session_key;
    if (id && id !== record.session_key) toast.dataset.pane = id;
    toast.dataset.what = what;
    toast.textContent = `${id ? this.roster.nameOf(id) : record.name || record.session_key}: ${what}`;
    toast.addEventListener("click", () => {
      toast.remove();
      if (id) this.onOpen(id);
    });
    this.box.append(toast);
    setTimeout(() => toast.remove(), TOAST_MS);
  }
}
