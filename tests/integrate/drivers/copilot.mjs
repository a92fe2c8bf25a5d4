// Drives the installed Copilot CLI extension through a stand-in for @github/copilot-sdk/extension,
// with the session events Copilot CLI 1.0.102 sends an extension (recorded from the real CLI).
// With "fail" after the extension's path, the turn's model call fails instead of answering.
globalThis.copilotHost = { listeners: {} };
await import(process.argv[2]);
const { listeners, options } = globalThis.copilotHost;
if (Object.keys(options).length) throw new Error(`the extension asked for more than events: ${Object.keys(options)}`);
const task = { parentAgentTaskId: "task-1" }; // every event of the main turn carries one
const emit = (name, data = {}, envelope = {}) => listeners[name] && listeners[name]({ type: name, data, ...envelope });
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
emit("user.message", { content: "run the tests", ...task });
emit("tool.execution_start", { toolCallId: "t1", toolName: "bash", arguments: { command: "npm test" }, ...task });
emit("user.message", { content: "a subagent's prompt" }, { agentId: "sub-1" });
emit("tool.execution_complete", { toolCallId: "t1", success: true, ...task });
emit("assistant.message", { content: "a subagent's words", parentToolCallId: "t1" });
if (process.argv[3] === "fail") {
  emit("session.error", { errorType: "api", message: "the model API said 400" });
} else {
  emit("assistant.message", { content: "Copilot: tests pass.", ...task });
}
emit("session.idle", {});
await settle();
