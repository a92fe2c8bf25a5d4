// A session's pending request, where a person can answer it: on its sidebar row, its phone
// card, above its terminal, in a headless session's panel. It shows the tool and the one line
// saying what it asks, and the answers the session's lane offers (the options of a headless
// session's adapter or of a gated pane: Allow, Always allow, Deny); a request that can only be
// answered where it is shown (a harness with no gate) offers its terminal instead.
//
// Every answer pins the request's id: one answered meanwhile (in the terminal, on the phone,
// by a script) is refused by rosterd, and the refusal is shown, never retried. The request
// leaves the page when the roster's change stream says it closed, whoever answered it.
// The tool's words are only ever set as textContent.

import { post, sessionPath } from "./api.js";

// The answers, in the order they are offered, by the option kinds that make them possible.
const ANSWERS = [
  { option: "allow", label: "Allow", kinds: ["allow_once"] },
  { option: "allow_always", label: "Always allow", kinds: ["allow_always"] },
  { option: "reject", label: "Deny", kinds: ["reject_once", "reject_always"] },
];

function element(tag, className, text) {
  const made = document.createElement(tag);
  if (className) made.className = className;
  if (text !== undefined) made.textContent = text;
  return made;
}

// What the request asks, on one line: "Bash: npm test", or the tool alone.
export function asked(pending) {
  const summary = (pending.summary || "").split("\n")[0];
  return summary || pending.tool || "a permission";
}

// The answers a request offers here, as [{option, label}]; none when only its terminal can.
export function answersOf(pending) {
  if (!pending || !pending.answerable) return [];
  const kinds = new Set((pending.options || []).map((option) => option.kind));
  return ANSWERS.filter((answer) => answer.kinds.some((kind) => kinds.has(kind)));
}

// The request `record` waits on, or null.
export function waitingOn(record) {
  return record && record.activity === "needs_attention" ? record.pending : null;
}

// The request of `record` as an element, or null when it waits on nothing.
// `onAnswered(record)`: the answer's record; `onTerminal()`: open the terminal (when only it can
// answer; omit where the terminal is already in view); `gateCommand(record)`: the command that
// turns on the gate that would let the page answer it, or null (gates.js).
export function requestView(record, { onAnswered, onTerminal, gateCommand } = {}) {
  const pending = waitingOn(record);
  if (!pending) return null;
  const box = element("div", "request");
  box.dataset.request = pending.id || "";
  box.dataset.session = record.session_key;
  box.setAttribute("role", "group");
  box.setAttribute("aria-label", "Needs your answer");
  // Clicks here answer; they never open or focus what the box sits in.
  box.addEventListener("click", (event) => event.stopPropagation());
  box.addEventListener("keydown", (event) => event.stopPropagation());
  const ask = element("p", "ask");
  if (pending.tool && pending.summary && !pending.summary.startsWith(pending.tool)) {
    ask.append(element("code", "tool", pending.tool), " ");
  }
  ask.append(element("span", "summary", asked(pending)));
  const choices = element("div", "choices");
  const error = element("p", "error");
  error.setAttribute("role", "alert");
  const answers = answersOf(pending);
  for (const answer of answers) {
    const made = element("button", "", answer.label);
    made.type = "button";
    made.dataset.answer = answer.option;
    made.addEventListener("click", () => send(record, pending, answer.option, { box, error, onAnswered }));
    choices.append(made);
  }
  if (!answers.length) {
    box.dataset.where = "terminal";
    if (onTerminal) {
      const open = element("button", "", "Answer in the terminal");
      open.type = "button";
      open.dataset.answer = "terminal";
      open.addEventListener("click", () => onTerminal());
      choices.append(open);
    } else {
      choices.append(element("span", "hint", "answer it in the terminal"));
    }
  }
  box.append(ask, choices);
  const command = !answers.length && gateCommand ? gateCommand(record) : null;
  if (command) {
    // One line: what to run so the page can answer this harness's requests too.
    const off = element("p", "gate-off", "To answer from here, turn its gate on: ");
    off.append(element("code", "", command));
    box.dataset.gate = command;
    box.append(off);
  }
  box.append(error);
  return box;
}

// Show `record`'s request in `slot` (emptied when it waits on nothing). The box is kept while
// the same request is open, so a refusal shown in it stays; the request, or null.
export function showRequest(slot, record, options) {
  const pending = waitingOn(record);
  const shown = slot.firstElementChild;
  const command = pending && options.gateCommand ? options.gateCommand(record) || "" : "";
  if (pending && shown && shown.dataset.request === pending.id && (shown.dataset.gate || "") === command) {
    return pending;
  }
  const request = requestView(record, options);
  slot.replaceChildren(...(request ? [request] : []));
  return pending;
}

async function send(record, pending, option, { box, error, onAnswered }) {
  error.textContent = "";
  box.dataset.busy = "yes";
  for (const button of box.querySelectorAll("button")) button.disabled = true;
  try {
    const path = `${sessionPath(record)}/permission`;
    const doc = await post(path, { option, request_id: pending.id });
    if (doc.record && onAnswered) onAnswered(doc.record);
  } catch (failure) {
    error.textContent = failure.message;
    for (const button of box.querySelectorAll("button")) button.disabled = false;
  } finally {
    delete box.dataset.busy;
  }
}
