// The launcher: "New session" opens a panel listing the agents rosterd can start (GET /launcher)
// and a custom command; Launch asks rosterd to open a window running it (POST /launch). An
// agent whose binary is not on the daemon's PATH is listed as "not installed" and cannot be
// picked: launching it would only show "command not found" (rosterd refuses it too).

const $ = (id) => document.getElementById(id);

export class Launcher {
  constructor(dialog, { onLaunched }) {
    this.dialog = dialog;
    this.onLaunched = onLaunched;
    $("launch-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.launch();
    });
    $("launch-cancel").addEventListener("click", () => dialog.close());
    // Typing a command picks the custom entry.
    $("launch-command").addEventListener("input", () => {
      this.dialog.querySelector('.custom input[type="radio"]').checked = true;
    });
  }

  async open() {
    $("launch-error").textContent = "";
    const response = await fetch("/launcher", { credentials: "same-origin", cache: "no-store" });
    if (!response.ok) {
      $("launch-error").textContent = `could not list the agents: HTTP ${response.status}`;
    } else {
      const doc = await response.json();
      this.renderAgents(doc.agents);
      if (!$("launch-cwd").value) $("launch-cwd").value = doc.home;
    }
    if (!this.dialog.open) this.dialog.showModal();
  }

  renderAgents(agents) {
    const rows = agents.map((agent) => {
      const label = document.createElement("label");
      label.className = "choice";
      label.dataset.agent = agent.name;
      label.dataset.installed = agent.installed ? "yes" : "no";
      const radio = document.createElement("input");
      radio.type = "radio";
      radio.name = "what";
      radio.value = agent.name;
      radio.disabled = !agent.installed;
      const display = document.createElement("span");
      display.className = "display";
      display.textContent = agent.display;
      const binary = document.createElement("code");
      binary.textContent = agent.binary;
      label.append(radio, display, binary);
      if (!agent.installed) {
        const missing = document.createElement("span");
        missing.className = "missing";
        missing.textContent = "not installed";
        label.title = `${agent.binary} is not on rosterd's PATH`;
        label.append(missing);
      }
      return label;
    });
    $("launch-agents").replaceChildren(...rows);
  }

  body() {
    const picked = this.dialog.querySelector('input[name="what"]:checked');
    if (!picked) return null;
    const body = picked.value ? { agent: picked.value } : { command: $("launch-command").value };
    body.cwd = $("launch-cwd").value;
    const name = $("launch-name").value.trim();
    if (name) body.name = name;
    return body;
  }

  async launch() {
    const body = this.body();
    if (!body) {
      $("launch-error").textContent = "pick an agent or type a command";
      return;
    }
    const go = $("launch-go");
    go.disabled = true;
    try {
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
      this.dialog.close();
      $("launch-name").value = "";
      $("launch-command").value = "";
      await this.onLaunched(doc.pane);
    } finally {
      go.disabled = false;
    }
  }
}
