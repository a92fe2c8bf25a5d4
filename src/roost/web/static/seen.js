// Which finished turns this browser has shown the person. A session idle after a turn ended
// reads "done" until the person opens it here (or watches it finish), then "idle": the pane
// badge's ✅ and 💤, which tmux turns from one to the other when a person looks at the pane.
// A turn is named by the record's completed_revision (the revision at which it ended, which a
// new occupant starts again); the marks live in localStorage, so every tab of this browser
// agrees, and only live sessions' marks are kept.

const KEY = "roost-seen";

function read() {
  try {
    return JSON.parse(localStorage.getItem(KEY)) || {};
  } catch {
    return {};
  }
}

export class Seen extends EventTarget {
  constructor() {
    super();
    this.marks = read(); // session_key -> the completed_revision last shown
    window.addEventListener("storage", (event) => {
      if (event.key !== KEY) return;
      this.marks = read();
      this.dispatchEvent(new Event("change"));
    });
  }

  // Whether the turn `record` last finished has been shown here.
  shown(record) {
    return (this.marks[record.session_key] || 0) >= (record.completed_revision || 0);
  }

  // The person sees `record` now: its last finished turn is shown. `live`: every live session
  // key, whose marks are the ones kept.
  mark(record, live) {
    if (!record || !record.completed_revision || this.shown(record)) return;
    const kept = {};
    for (const key of live) if (key in this.marks) kept[key] = this.marks[key];
    kept[record.session_key] = record.completed_revision;
    this.marks = kept;
    localStorage.setItem(KEY, JSON.stringify(kept));
    this.dispatchEvent(new Event("change"));
  }
}
