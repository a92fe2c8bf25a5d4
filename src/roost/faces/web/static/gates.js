// Which harnesses' permission requests this node's rosterd could answer from the page, and the
// command that turns a gate on where it is off (GET /gates). A request only the terminal can
// answer says that command, in one line, when its harness's gate is off here: the person learns
// how to answer from the page next time. Asked at the start and again when such a request
// appears (a person may have just run the command); another node's gates are its own affair.

import { get } from "./api.js";

function local(record) {
  return !record.peer_state || record.peer_state === "local";
}

export class Gates extends EventTarget {
  constructor() {
    super();
    this.turnOn = new Map(); // harness -> the command that turns its gate on (only those off)
    this.known = new Set(); // every harness that offers a gate
    this.asked = new Set(); // the request ids already asked about
  }

  async refresh() {
    const doc = await get("/gates");
    this.known = new Set(Object.keys(doc.gates));
    this.turnOn = new Map(Object.entries(doc.gates).filter(([, command]) => command));
    this.dispatchEvent(new Event("change"));
  }

  // Ask again for each new request of a gated harness that only the terminal can answer.
  watch(records) {
    let fresh = false;
    for (const record of records) {
      const pending = record.pending;
      if (!pending || pending.answerable || !local(record) || !this.known.has(record.harness)) continue;
      if (this.asked.has(pending.id)) continue;
      this.asked.add(pending.id);
      fresh = true;
    }
    if (fresh) this.refresh().catch((error) => console.warn("gates:", error.message));
  }

  // The command that would let the page answer `record`'s requests, or null.
  commandFor(record) {
    if (!record || !local(record)) return null;
    return this.turnOn.get(record.harness) || null;
  }
}
