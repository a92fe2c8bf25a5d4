// roost-integration: copilot — written by `rosterd integrate install copilot`; `rosterd integrate uninstall copilot` removes it.
// A Copilot CLI extension: turns the session's hooks and events into Claude-shaped hook events and
// pipes each into `rosterd-hook copilot`, one at a time and in order. It never writes to stdout,
// which belongs to the CLI's JSON-RPC.
import { spawn } from "node:child_process";
import { joinSession } from "@github/copilot-sdk/extension";

const HOOK = "__ROSTERD_HOOK__";
let queue = Promise.resolve();

function run(event) {
  return new Promise((resolve) => {
    let out = "";
    try {
      const child = spawn(HOOK, ["copilot"], { stdio: ["pipe", "pipe", "ignore"] });
      child.stdout.on("data", (chunk) => (out += chunk));
      child.on("error", () => resolve(""));
      child.on("close", () => resolve(out));
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify(event));
    } catch {
      resolve("");
    }
  });
}

const inPane = Boolean(process.env.TMUX_PANE);
let sessionId = null;
let cwd = process.cwd();
let reply = null;

function report(name, fields = {}) {
  if (!inPane) return Promise.resolve("");
  const event = { hook_event_name: name, session_id: sessionId, cwd, ...fields };
  queue = queue.then(() => run(event));
  return queue;
}

function seen(input, invocation) {
  if (invocation && invocation.sessionId) sessionId = invocation.sessionId;
  if (input && input.workingDirectory) cwd = input.workingDirectory;
}

const session = await joinSession({
  hooks: {
    onSessionStart: async (input, invocation) => {
      seen(input, invocation);
      const context = await report("SessionStart");
      return context ? { additionalContext: context } : undefined;
    },
    onUserPromptSubmitted: async (input, invocation) => {
      seen(input, invocation);
      reply = null;
      report("UserPromptSubmit");
    },
    onPreToolUse: async (input, invocation) => {
      seen(input, invocation);
      report("PreToolUse", { tool_name: input.toolName, tool_input: input.toolArgs });
    },
    onPostToolUse: async (input, invocation) => {
      seen(input, invocation);
      report("PostToolUse", { tool_name: input.toolName });
    },
    onPostToolUseFailure: async (input, invocation) => {
      seen(input, invocation);
      report("PostToolUseFailure", { tool_name: input.toolName });
    },
  },
});

if (session.sessionId) sessionId = session.sessionId;

session.on("assistant.message", (event) => {
  const data = event.data || {};
  if (!data.parentToolCallId && data.content) reply = data.content; // a subagent's words are not the reply
});
session.on("permission.requested", (event) => {
  const request = (event.data && event.data.permissionRequest) || {};
  report("PermissionRequest", {
    tool_name: request.kind || "permission",
    tool_input: { command: request.fullCommandText || request.command, path: request.path, url: request.url },
  });
});
session.on("session.idle", () => report("Stop", { last_assistant_message: reply }));
session.on("session.error", (event) => report("StopFailure", { error: (event.data && event.data.message) || "error" }));
