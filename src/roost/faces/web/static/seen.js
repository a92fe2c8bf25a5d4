// Which finished turns this browser has shown the person. A session whose record says done
// reads "done" until the person opens it here (or watches it finish), then "idle": the pane
// badge's ✅ and 💤, which tmux turns from one to the other when a person looks at the pane.
// A turn is named by the record's completed_revision (the revision at which it ended, which a
// new occupant starts again), or, for a done the daemon found already there (a restarted
// rosterd reading a pane's badge, which saw no turn end), by when that done was claimed;
// the marks live in localStorage, so every tab of this browser agrees, and only live
// sessions' marks are kept.

const KEY = "roost-seen";

function read() {
  try {
    return JSON.parse(localStorage.getItem(KEY)) || {};
  } catch {
    return {};
  }
}

// The name of the turn `record` last finished: its completed_revision, else "at <activity_at>"
// for a done with none; 0 when it names no finished turn.
function turnOf(record) {
  if (record.completed_revision) return record.completed_revision;
  return record.state === "done" && record.activity_at ? `at ${record.activity_at}` : 0;
}

export class Seen extends EventTarget {
  constructor() {
    super();
    this.marks = read(); // session_key -> the name of the turn last shown (turnOf)
    window.addEventListener("storage", (event) => {
      if (event.key !== KEY) return;
      this.marks = read();
      this.dispatchEvent(new Event("change"));
    });
  }

  // Whether the turn `record` last finished has been shown here.
  shown(record) {
    const mark = this.marks[record.session_key];
    const turn = turnOf(record);
    if (typeof turn === "string") return mark === turn;
    return (typeof mark === "number" ? mark : 0) >= turn;
  }

  // The person sees `record` now: its last finished turn is shown. `live()`: every live session
  // key, whose marks are the ones kept (asked only when a mark is made: a swarm may hold
  // fifty thousand, and the page asks on every change of the roster).
  mark(record, live) {
    if (!record || !turnOf(record) || this.shown(record)) return;
    const kept = {};
    for (const key of live()) if (key in this.marks) kept[key] = this.marks[key];
    kept[record.session_key] = turnOf(record);
    this.marks = kept;
    localStorage.setItem(KEY, JSON.stringify(kept));
    this.dispatchEvent(new Event("change"));
  }
}
