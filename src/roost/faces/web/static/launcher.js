// The launcher: "New session" opens a panel listing the agents rosterd can start (GET /launcher),
// the person's own shell and a custom command; Launch asks rosterd to open a window running it
// (POST /launch). rosterd looks for each agent where the person can run it now (their login
// shell's PATH, roost's tmux server's, its own), asked again each time the panel opens, and
// lists the installed ones first; one it cannot find is listed as "not installed" and cannot
// be picked: launching it would only show "command not found" (rosterd refuses it too).
//
// "In a git worktree of its own" runs it, as `roost spawn --worktree` does, in a new worktree and
// branch of the folder's repository (the branch named after the window unless one is typed).
//
// Run headless, the panel lists instead the harnesses rosterd's runner has an ACP adapter for
// (the listing's `headless`) and a permission policy; Launch starts a session with no terminal
// (POST /sessions), which the page then shows in a tab of its own.

import { post } from "./api.js";

const $ = (id) => document.getElementById(id);
const NAMED = { terminal: "the agent's or command's name", headless: "the agent's own title" };

export class Launcher {
  constructor(dialog, { onLaunched, onStarted }) {
    this.dialog = dialog;
    this.onLaunched = onLaunched;
    this.onStarted = onStarted;
    this.listing = { agents: [], headless: [], shell: null };
    $("launch-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.launch();
    });
    $("launch-cancel").addEventListener("click", () => dialog.close());
    // Typing a command picks the custom entry.
    $("launch-command").addEventListener("input", () => {
      this.dialog.querySelector('.custom input[type="radio"]').checked = true;
    });
    for (const radio of dialog.querySelectorAll('input[name="lane"]')) {
      radio.addEventListener("change", () => this.render());
    }
    $("launch-worktree").addEventListener("change", () => {
      $("launch-branch").hidden = !$("launch-worktree").checked;
    });
  }

  lane() {
    return this.dialog.querySelector('input[name="lane"]:checked').value;
  }

  async open() {
    $("launch-error").textContent = "";
    const response = await fetch("/launcher", { credentials: "same-origin", cache: "no-store" });
    if (!response.ok) {
      $("launch-error").textContent = `could not list the agents: HTTP ${response.status}`;
    } else {
      const doc = await response.json();
      this.listing = { agents: doc.agents, headless: doc.headless || [], shell: doc.shell || null };
      if (!$("launch-cwd").value) $("launch-cwd").value = doc.home;
    }
    this.render();
    if (!this.dialog.open) this.dialog.showModal();
  }

  render() {
    const headless = this.listing.headless;
    const lanes = $("launch-headless");
    lanes.querySelector("input").disabled = headless.length === 0;
    lanes.title = headless.length ? "" : "rosterd has no ACP adapter to run an agent headless";
    if (!headless.length) this.dialog.querySelector('input[name="lane"][value="terminal"]').checked = true;
    const lane = this.lane();
    const custom = this.dialog.querySelector(".choice.custom");
    custom.hidden = lane === "headless";
    if (custom.hidden) custom.querySelector('input[type="radio"]').checked = false;
    $("launch-policy-field").hidden = lane !== "headless";
    $("launch-worktree-field").hidden = lane === "headless";
    $("launch-name").placeholder = NAMED[lane];
    $("launch-agents").replaceChildren(...(lane === "headless" ? this.harnessRows() : this.agentRows()));
  }

  // The installed agents (rosterd lists them first), the person's shell, then the rest.
  agentRows() {
    const rows = this.listing.agents.map((agent) => {
      const label = choice(agent.name, agent.display, agent.binary);
      label.dataset.installed = agent.installed ? "yes" : "no";
      label.querySelector("input").disabled = !agent.installed;
      if (!agent.installed) {
        const missing = document.createElement("span");
        missing.className = "missing";
        missing.textContent = "not installed";
        label.title = `${agent.binary} is not on the PATH of your login shell, of roost's tmux server or of rosterd`;
        label.append(missing);
      }
      return label;
    });
    if (!this.listing.shell) return rows;
    const shell = choice("", "Shell", shellName(this.listing.shell));
    shell.classList.add("shell");
    delete shell.dataset.agent;
    shell.dataset.shell = this.listing.shell;
    const installed = this.listing.agents.filter((agent) => agent.installed).length;
    rows.splice(installed, 0, shell);
    return rows;
  }

  // A harness no agent manifest describes (one the config added) is shown by its name.
  harnessRows() {
    const agents = new Map(this.listing.agents.map((agent) => [agent.name, agent]));
    return this.listing.headless.map((harness) => {
      const agent = agents.get(harness);
      return choice(harness, agent ? agent.display : harness, "over ACP");
    });
  }

  body() {
    const picked = this.dialog.querySelector('input[name="what"]:checked');
    if (!picked) return null;
    const shell = picked.closest(".shell");
    let body;
    if (shell) body = { command: shell.dataset.shell };
    else body = picked.value ? { agent: picked.value } : { command: $("launch-command").value };
    body.cwd = $("launch-cwd").value;
    const name = $("launch-name").value.trim() || (shell ? shellName(shell.dataset.shell) : "");
    if (name) body.name = name;
    if (this.lane() === "terminal" && $("launch-worktree").checked) {
      body.worktree = true;
      const branch = $("launch-branch").value.trim();
      if (branch) body.branch = branch;
    }
    return body;
  }

  async launch() {
    const body = this.body();
    if (!body) {
      $("launch-error").textContent = this.lane() === "headless" ? "pick an agent" : "pick an agent or type a command";
      return;
    }
    const go = $("launch-go");
    go.disabled = true;
    try {
      if (this.lane() === "headless") await this.start(body);
      else await this.openWindow(body);
    } finally {
      go.disabled = false;
    }
  }

  async openWindow(body) {
    const response = await fetch("/launch", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    const doc = await response.json().catch(() => ({}));
    if (!response.ok) {
      $("launch-error").textContent = doc.error || `HTTP ${response.status}`;
      return;
    }
    this.done();
    await this.onLaunched(doc.pane);
  }

  async start({ agent, cwd, name }) {
    const body = { harness: agent, cwd, policy: $("launch-policy").value };
    if (name) body.name = name;
    let doc;
    try {
      doc = await post("/sessions", body);
    } catch (error) {
      $("launch-error").textContent = error.message;
      return;
    }
    this.done();
    this.onStarted(doc.record);
  }

  done() {
    this.dialog.close();
    $("launch-name").value = "";
    $("launch-command").value = "";
  }
}

// "bash" for "/bin/bash".
function shellName(path) {
  return path.split("/").pop() || path;
}

function choice(name, display, note) {
  const label = document.createElement("label");
  label.className = "choice";
  label.dataset.agent = name;
  const radio = document.createElement("input");
  radio.type = "radio";
  radio.name = "what";
  radio.value = name;
  const shown = document.createElement("span");
  shown.className = "display";
  shown.textContent = display;
  const code = document.createElement("code");
  code.textContent = note;
  label.append(radio, shown, code);
  return label;
}
