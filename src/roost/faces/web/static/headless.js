// One headless session (run by rosterd over ACP, no terminal) in a tab: what its record says —
// activity and liveness, mode, plan, usage, the last reply, a pending permission — and what a
// person can do: prompt it, answer the permission, cancel the turn, suspend, resume, stop it, or
// hand it off to another node of the swarm (and, once it went, see where).
//
// Everything shown comes from the roster's record (roster.js hands each new one to `update`);
// every action is a POST to /sessions/{key}/… (to /swarm/{node}/sessions/{key}/… for a session
// another node owns: `path`), whose answer carries the record after it. Agent
// text (the reply, the plan, a tool's summary) is only ever set as textContent.

import { get, post } from "./api.js";
import { badge } from "./badges.js";
import { showRequest } from "./request.js";

function element(tag, className, text) {
  const made = document.createElement(tag);
  if (className) made.className = className;
  if (text !== undefined) made.textContent = text;
  return made;
}

function section(className, title) {
  const part = element("section", className);
  part.append(element("h3", "", title));
  return part;
}

function button(label, action) {
  const made = element("button", "", label);
  made.type = "button";
  made.dataset.action = action;
  return made;
}

// "context 1,200 / 200,000 · 8 tokens": what the adapter reported, in the parts it reported.
export function usageText(usage) {
  if (!usage) return "";
  const parts = [];
  const count = (n) => Number(n).toLocaleString("en");
  if (usage.used != null) {
    parts.push(usage.size != null ? `context ${count(usage.used)} / ${count(usage.size)}` : `context ${count(usage.used)}`);
  }
  const total = usage.tokens && usage.tokens.totalTokens;
  if (total != null) parts.push(`${count(total)} tokens`);
  return parts.join(" · ");
}

export class HeadlessView extends EventTarget {
  // `onRecord(record)`: an action's answer carried the session's record after it; `stateOf`:
  // the state a record reads as (roster.js); `path`: the session's routes (api.js sessionPath).
  constructor(key, box, { onRecord, stateOf, path = `/sessions/${encodeURIComponent(key)}` }) {
    super();
    this.key = key;
    this.stateOf = stateOf;
    this.path = path;
    this.box = box;
    this.onRecord = onRecord;
    this.state = "open"; // open | closed (ended), as a terminal tab reads it
    this.reason = "";
    this.build();
  }

  build() {
    const panel = element("div", "headless");
    panel.dataset.session = this.key;
    this.panel = panel;
    const head = element("header");
    this.name = element("span", "name");
    this.badgeSlot = element("span");
    this.liveness = element("span", "liveness");
    head.append(this.name, this.badgeSlot, this.liveness);
    this.facts = element("p", "facts");
    this.failure = element("p", "failure");
    this.pending = section("pending", "Needs your answer");
    this.request = element("div", "slot");
    this.pending.append(this.request);
    this.plan = section("plan", "Plan");
    this.steps = element("ol");
    this.plan.append(this.steps);
    this.recap = section("recap", "Last reply");
    this.reply = element("pre");
    this.recap.append(this.reply);
    this.form = element("form", "prompt");
    this.text = element("textarea");
    this.text.rows = 3;
    this.text.placeholder = "a prompt for the agent";
    this.text.setAttribute("aria-label", "Prompt");
    this.send = element("button", "", "Send");
    this.send.type = "submit";
    this.form.append(this.text, this.send);
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.prompt();
    });
    this.text.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) this.prompt();
    });
    this.controls = element("div", "controls");
    this.buttons = {
      cancel: button("Cancel", "cancel"),
      suspend: button("Suspend", "suspend"),
      resume: button("Resume", "resume"),
      stop: button("Stop", "stop"),
    };
    for (const [verb, made] of Object.entries(this.buttons)) {
      made.addEventListener("click", () => this.act(`${this.path}/${verb}`, {}));
      this.controls.append(made);
    }
    this.handoff = button("Hand off to…", "handoff");
    this.handoff.addEventListener("click", () => this.offerNodes());
    this.controls.append(this.handoff);
    this.nodes = element("div", "nodes");
    this.nodes.hidden = true;
    this.handed = element("p", "handed");
    this.error = element("p", "error");
    this.error.setAttribute("role", "alert");
    panel.append(head, this.facts, this.failure, this.handed, this.pending, this.plan, this.recap, this.form);
    panel.append(this.controls, this.nodes);
    panel.append(this.error);
    this.box.append(panel);
  }

  update(record) {
    if (!record) return;
    const panel = this.panel;
    panel.dataset.activity = record.activity;
    panel.dataset.liveness = record.liveness;
    this.name.textContent = record.name || record.harness || this.key;
    const ended = record.liveness === "ended";
    this.badgeSlot.replaceChildren(badge(ended ? null : this.stateOf(record)));
    this.liveness.textContent = record.liveness;
    const facts = [
      record.harness,
      record.mode && `mode ${record.mode}`,
      record.permission_policy && `policy ${record.permission_policy}`,
      usageText(record.usage),
    ];
    this.facts.textContent = facts.filter(Boolean).join(" · ");
    this.facts.title = record.cwd || "";
    this.failure.textContent = record.error_reason || "";
    this.renderPending(record);
    this.renderPlan(record.plan);
    this.recap.hidden = !record.recap;
    this.reply.textContent = record.recap || "";
    this.text.disabled = ended;
    this.send.disabled = ended;
    this.buttons.cancel.hidden = record.activity !== "active" || record.liveness !== "live";
    this.buttons.suspend.hidden = record.liveness !== "live";
    this.buttons.resume.hidden = record.liveness !== "suspended";
    this.buttons.stop.hidden = ended;
    this.handoff.hidden = ended;
    if (ended) this.nodes.hidden = true;
    const to = record.handed_to;
    this.handed.textContent = to ? `Handed off to ${to.node} as ${to.session_key}` : "";
    // An ended session's tab stays, struck through like a closed terminal's, until closed.
    const tab = ended ? "closed" : "open";
    if (tab !== this.state) {
      this.state = tab;
      this.reason = ended ? `the session ended${record.ended_reason ? ` (${record.ended_reason})` : ""}` : "";
      this.dispatchEvent(new Event("state"));
    }
  }

  renderPending(record) {
    const onAnswered = (after) => this.onRecord(after);
    this.pending.hidden = !showRequest(this.request, record, { onAnswered });
  }

  renderPlan(plan) {
    const entries = (plan && plan.entries) || [];
    this.plan.hidden = entries.length === 0;
    this.steps.replaceChildren(
      ...entries.map((entry) => {
        const step = element("li");
        step.dataset.status = entry.status || "";
        if (entry.priority) step.dataset.priority = entry.priority;
        const status = (entry.status || "").replace(/_/g, " ");
        step.append(element("span", "content", entry.content || ""), element("span", "status", status));
        return step;
      }),
    );
  }

  // "Hand off to…": the swarm's members this node reaches now, one button each.
  async offerNodes() {
    this.error.textContent = "";
    let doc;
    try {
      doc = await get("/swarm/nodes");
    } catch (error) {
      this.error.textContent = error.message;
      return;
    }
    const reachable = (doc.nodes || []).filter((node) => !node.self && !node.revoked && node.reachable);
    if (reachable.length === 0) {
      this.error.textContent = "no other node of the swarm is reachable now";
      return;
    }
    const path = `/sessions/${encodeURIComponent(this.key)}/handoff`;
    this.nodes.replaceChildren(
      ...reachable.map((node) => {
        const made = button(node.name, "handoff-to");
        made.dataset.node = node.name;
        made.title = node.address || "";
        made.addEventListener("click", async () => {
          if (await this.act(path, { to: node.name })) this.nodes.hidden = true;
        });
        return made;
      }),
    );
    this.nodes.hidden = false;
  }

  async prompt() {
    const text = this.text.value;
    if (!text.trim() || this.send.disabled) return;
    if (await this.act(`${this.path}/prompt`, { text })) this.text.value = "";
  }

  // POST an action; its answer's record goes to the roster, its refusal to the person.
  async act(path, body) {
    this.error.textContent = "";
    this.panel.dataset.busy = "yes";
    try {
      const doc = await post(path, body);
      if (doc.record) this.onRecord(doc.record);
      return true;
    } catch (error) {
      this.error.textContent = error.message;
      return false;
    } finally {
      delete this.panel.dataset.busy;
    }
  }

  focus() {
    if (!this.text.disabled) this.text.focus();
  }

  // Nothing to release (no socket, no timer): closing the tab removes the box.
  dispose() {}
}
