// Drives the installed opencode plugin the way opencode 1 calls a server plugin.
const plugin = await import(process.argv[2]);
const client = {
  session: {
    messages: async () => ({
      data: [
        { info: { role: "user" }, parts: [{ type: "text", text: "run the tests" }] },
        { info: { role: "assistant" }, parts: [{ type: "text", text: "All tests pass." }, { type: "tool" }] },
      ],
    }),
  },
};
const hooks = await plugin.RoostPlugin({ client, directory: process.cwd() });
const event = (type, properties) => hooks.event({ event: { type, properties } });
await hooks["chat.message"]({ sessionID: "oc-1" }, {});
await event("permission.asked", { sessionID: "oc-1", permission: "bash", patterns: ["npm test"] });
await event("permission.replied", { sessionID: "oc-1" });
await event("session.created", { info: { id: "oc-child", parentID: "oc-1" } });
await event("session.idle", { sessionID: "oc-child" });
await event("session.idle", { sessionID: "oc-1" });
