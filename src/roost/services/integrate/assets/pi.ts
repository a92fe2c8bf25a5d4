// roost-integration: pi — written by `rosterd integrate install pi`; `rosterd integrate uninstall pi` removes it.
// A pi extension: turns pi's lifecycle events into Claude-shaped hook events and pipes each into
// `rosterd-hook pi`, one at a time and in order. It never reports blocked: pi asks no permissions of
// its own, and another extension's dialog is not an event here (the daemon reads it off the screen).
import { spawn } from "node:child_process";

const HOOK = "__ROSTERD_HOOK__";
let queue = Promise.resolve();

function run(event) {
  return new Promise((resolve) => {
    try {
      const child = spawn(HOOK, ["pi"], { stdio: ["pipe", "ignore", "ignore"] });
      child.on("error", resolve);
      child.on("close", resolve);
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify(event));
    } catch {
      resolve(undefined);
    }
  });
}

function text(message) {
  const content = message && Array.isArray(message.content) ? message.content : [];
  return content.filter((part) => part && part.type === "text").map((part) => part.text).join("\n").trim();
}

export default function (pi) {
  if (!process.env.TMUX_PANE) return;
  const report = (name, ctx, fields = {}) => {
    const sessions = ctx && ctx.sessionManager;
    const event = {
      hook_event_name: name,
      session_id: sessions && sessions.getSessionId ? sessions.getSessionId() : null,
      transcript_path: sessions && sessions.getSessionFile ? sessions.getSessionFile() : null,
      cwd: (ctx && ctx.cwd) || process.cwd(),
      ...fields,
    };
    queue = queue.then(() => run(event));
  };
  pi.on("session_start", async (_event, ctx) => report("SessionStart", ctx));
  pi.on("agent_start", async (_event, ctx) => report("UserPromptSubmit", ctx));
  pi.on("tool_call", async (event, ctx) => report("PreToolUse", ctx, { tool_name: event.toolName, tool_input: event.input }));
  pi.on("tool_result", async (event, ctx) => report("PostToolUse", ctx, { tool_name: event.toolName }));
  pi.on("agent_end", async (event, ctx) => {
    const messages = Array.isArray(event.messages) ? event.messages : [];
    const last = [...messages].reverse().find((m) => m && m.role === "assistant");
    if (last && last.stopReason === "error") {
      report("StopFailure", ctx, { error: last.errorMessage || "error" });
    } else {
      report("Stop", ctx, { last_assistant_message: text(last) || null });
    }
  });
}
