// Drives the installed Copilot CLI extension through a stand-in for @github/copilot-sdk/extension.
globalThis.copilotHost = { listeners: {} };
await import(process.argv[2]);
const { hooks, listeners } = globalThis.copilotHost;
const invocation = { sessionId: "cp-1" };
const base = { timestamp: new Date(), workingDirectory: process.cwd() };
const emit = (name, data) => listeners[name](data === undefined ? {} : { data });
await hooks.onSessionStart({ ...base, source: "new" }, invocation);
await hooks.onUserPromptSubmitted({ ...base, prompt: "run the tests" }, invocation);
emit("permission.requested", { requestId: "r1", permissionRequest: { kind: "shell", fullCommandText: "npm test" } });
await hooks.onPostToolUse({ ...base, toolName: "shell", toolArgs: {} }, invocation);
emit("assistant.message", { content: "a subagent's words", parentToolCallId: "t1" });
emit("assistant.message", { content: "Copilot: tests pass." });
emit("session.idle");
