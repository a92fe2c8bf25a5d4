// roost-integration: copilot — written by `rosterd integrate install copilot`; `rosterd integrate uninstall copilot` removes it.
// A Copilot CLI extension: turns the session's events into Claude-shaped hook events and
// pipes each into `rosterd-hook copilot`, one at a time and in order. It never writes to stdout,
// which belongs to the CLI's JSON-RPC.
import { spawn } from "node:child_process";
import { joinSession } from "@github/copilot-sdk/extension";

const HOOK = "__ROSTERD_HOOK__";
let queue = Promise.resolve();

function run(event) {
  return new Promise((resolve) => {
    try {
      const child = spawn(HOOK, ["copilot"], { stdio: ["pipe", "ignore", "ignore"] });
      child.on("error", resolve);
      child.on("close", resolve);
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify(event));
    } catch {
      resolve();
    }
  });
}

const inPane = Boolean(process.env.TMUX_PANE);
let sessionId = null;
let reply = null;
let failed = false;

function report(name, fields = {}) {
  if (!inPane) return;
  const event = { hook_event_name: name, session_id: sessionId, cwd: process.cwd(), ...fields };
  queue = queue.then(() => run(event));
}

// The session's events only. Registering hooks, or a handler for permission requests, makes
// Copilot ask the person to grant the extension "elevated permissions" in every folder, and one
// refused does not load; so it never hears that a dialog opened, and the daemon's screen
// reader badges Copilot's dialogs instead (`reports_dialogs = false` in its manifest).
const session = await joinSession({});
sessionId = session.sessionId || null;
report("SessionStart");

// A subagent's events carry its agentId, or the tool call that started it; they are not the
// pane's turn. (Every event of the main turn carries a parentAgentTaskId.)
const own = (event) => !event.agentId && !(event.data && event.data.parentToolCallId);
session.on("user.message", (event) => {
  if (!own(event)) return;
  reply = null;
  failed = false;
  report("UserPromptSubmit");
});
session.on("assistant.message", (event) => {
  if (own(event) && event.data.content) reply = event.data.content;
});
session.on("tool.execution_start", (event) => {
  if (own(event)) report("PreToolUse", { tool_name: event.data.toolName, tool_input: event.data.arguments });
});
session.on("tool.execution_complete", (event) => {
  if (own(event)) report(event.data.success === false ? "PostToolUseFailure" : "PostToolUse", {});
});
// Answered either way, the dialog is gone and the turn goes on (a refusal ends it at idle).
session.on("permission.completed", () => report("PostToolUse"));
session.on("session.error", (event) => {
  failed = true;
  report("StopFailure", { error: (event.data && event.data.message) || "error" });
});
// After an error the session goes idle too; that idle must not turn the error into done.
session.on("session.idle", () => {
  if (failed) {
    failed = false;
    return;
  }
  report("Stop", { last_assistant_message: reply });
});
