// A session's state as a person reads it: a badge, and a folder's rollup of its sessions.
// The states read "working", "needs input", "error", "done" and "idle" (roster.js says which
// is which), the same words in the toasts and the pushed notifications; a plain shell has no
// state and no badge.

export const LABELS = { working: "working", blocked: "needs input", error: "error", done: "done", idle: "idle" };
const ORDER = ["working", "blocked", "error", "done", "idle"];

export function badge(state) {
  const span = document.createElement("span");
  span.className = "badge";
  if (state && LABELS[state]) {
    span.dataset.state = state;
    span.textContent = LABELS[state];
  } else {
    span.hidden = true;
  }
  return span;
}

// "2 working · 1 needs input": counts per state, in a fixed order, empty when nothing is marked.
export function rollup(states) {
  const counts = new Map();
  for (const state of states) if (state) counts.set(state, (counts.get(state) || 0) + 1);
  return ORDER.filter((state) => counts.has(state))
    .map((state) => `${counts.get(state)} ${LABELS[state]}`)
    .join(" · ");
}
