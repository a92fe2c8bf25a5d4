// "Fork…": a new session that starts from an open session's conversation (POST …/fork), named
// by the person, in a new git worktree and branch of its own when asked, the source left as it
// was. A headless session is forked by its ACP adapter, a terminal's agent by its CLI in a new
// window beside it; either way the fork opens in a tab of its own. rosterd's refusal (no
// conversation yet, an agent that cannot fork, a name a session has, a folder outside git) is
// shown in its own words, and nothing was started.

import { post } from "./api.js";

const $ = (id) => document.getElementById(id);

export class ForkDialog {
  // `onForked(answer, remote)`: the fork started (on another node of the swarm, when `remote`);
  // the answer says its record (headless) or its pane.
  constructor(dialog, { onForked }) {
    this.dialog = dialog;
    this.onForked = onForked;
    this.path = null;
    this.remote = false;
    $("fork-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.fork();
    });
    $("fork-cancel").addEventListener("click", () => dialog.close());
    $("fork-worktree").addEventListener("change", () => {
      $("fork-branch").hidden = !$("fork-worktree").checked;
    });
  }

  // Ask for the fork of the session whose routes are at `path`, shown to the person as `label`;
  // `remote`: another node owns it.
  open(path, label, remote = false) {
    this.path = path;
    this.remote = remote;
    $("fork-source").textContent = label;
    $("fork-error").textContent = "";
    $("fork-name").value = "";
    $("fork-worktree").checked = false;
    $("fork-branch").value = "";
    $("fork-branch").hidden = true;
    if (!this.dialog.open) this.dialog.showModal();
    $("fork-name").focus();
  }

  async fork() {
    const name = $("fork-name").value.trim();
    if (!name) {
      $("fork-error").textContent = "name the fork";
      return;
    }
    const body = { name };
    if ($("fork-worktree").checked) {
      body.worktree = true;
      const branch = $("fork-branch").value.trim();
      if (branch) body.branch = branch;
    }
    const go = $("fork-go");
    go.disabled = true;
    let doc;
    try {
      doc = await post(`${this.path}/fork`, body);
    } catch (error) {
      $("fork-error").textContent = error.message;
      return;
    } finally {
      go.disabled = false;
    }
    this.dialog.close();
    await this.onForked(doc, this.remote);
  }
}
