// Drives the installed pi extension the way pi calls an extension's handlers. pi loads the
// .ts file through its own loader; node cannot, so the driver loads the same text as .mjs.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const directory = mkdtempSync(join(tmpdir(), "roost-pi-"));
const copy = join(directory, "roost.mjs");
copyFileSync(process.argv[2], copy);
const handlers = {};
const pi = { on: (name, handler) => (handlers[name] = handler) };
(await import(copy)).default(pi);
rmSync(directory, { recursive: true });
const ctx = {
  cwd: process.cwd(),
  sessionManager: { getSessionId: () => "pi-1", getSessionFile: () => "/tmp/pi-1.jsonl" },
};
await handlers.session_start({}, ctx);
await handlers.agent_start({}, ctx);
await handlers.tool_call({ toolName: "bash", input: { command: "ls" } }, ctx);
await handlers.tool_result({ toolName: "bash" }, ctx);
await handlers.agent_end(
  { messages: [{ role: "user", content: "hi" }, { role: "assistant", content: [{ type: "text", text: "Pi says hi." }] }] },
  ctx,
);
