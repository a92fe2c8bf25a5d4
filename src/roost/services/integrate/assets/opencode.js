// roost-integration: opencode — written by `rosterd integrate install opencode`; `rosterd integrate uninstall opencode` removes it.
// Turns opencode's events into Claude-shaped hook events and pipes each into `rosterd-hook opencode`,
// one at a time and in order, so roost can badge this pane and keep its last reply.
import { spawn } from "node:child_process";

const HOOK = "__ROSTERD_HOOK__";
let queue = Promise.resolve();

function run(event) {
  return new Promise((resolve) => {
    try {
      const child = spawn(HOOK, ["opencode"], { stdio: ["pipe", "ignore", "ignore"] });
      child.on("error", resolve);
      child.on("close", resolve);
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify(event));
    } catch {
      resolve();
    }
  });
}

export const RoostPlugin = async ({ client, directory }) => {
  if (!process.env.TMUX_PANE) return {};
  const children = new Set(); // subagent sessions: their events never end the pane's turn
  const report = (name, sessionID, fields = {}) => {
    const event = { hook_event_name: name, session_id: sessionID, cwd: directory, ...fields };
    if (children.has(sessionID)) event.agent_id = sessionID;
    queue = queue.then(() => run(event));
  };
  const failed = new Set(); // sessions whose turn ended in session.error, until their next prompt
  const lastReply = async (sessionID) => {
    try {
      const { data } = await client.session.messages({ path: { id: sessionID } });
      const last = [...(data || [])].reverse().find((m) => m.info && m.info.role === "assistant");
      const text = (last ? last.parts : []).filter((p) => p.type === "text" && !p.synthetic).map((p) => p.text);
      return text.join("\n").trim() || null;
    } catch {
      return null;
    }
  };
  return {
    "chat.message": async (input) => {
      failed.delete(input.sessionID);
      report("UserPromptSubmit", input.sessionID);
    },
    "tool.execute.after": async (input) => report("PostToolUse", input.sessionID, { tool_name: input.tool }),
    event: async ({ event }) => {
      const p = event.properties || {};
      switch (event.type) {
        case "session.created":
        case "session.updated":
          if (p.info && p.info.parentID) children.add(p.info.id);
          break;
        case "permission.asked":
        case "permission.updated": {
          const summary = p.title || (p.patterns || []).join(" ") || [].concat(p.pattern || []).join(" ");
          report("PermissionRequest", p.sessionID, {
            tool_name: p.permission || p.type || "permission",
            tool_input: { description: summary },
          });
          break;
        }
        case "permission.replied":
          report("PostToolUse", p.sessionID);
          break;
        case "session.idle":
          // OpenCode goes idle after a failed turn too, and may say so more than once: the
          // failure is the turn's end, not "done", until the next prompt clears it.
          if (failed.has(p.sessionID)) break;
          report("Stop", p.sessionID, { last_assistant_message: await lastReply(p.sessionID) });
          break;
        case "session.error": {
          failed.add(p.sessionID);
          const error = p.error || {};
          report("StopFailure", p.sessionID, { error: (error.data && error.data.message) || error.name || "error" });
          break;
        }
      }
    },
  };
};
