// A stand-in for the SDK Copilot CLI bundles: records what an extension asks of joinSession and
// the event listeners it registers.
export async function joinSession(options) {
  globalThis.copilotHost.options = options || {};
  return {
    sessionId: "cp-1",
    on: (name, handler) => {
      globalThis.copilotHost.listeners[name] = handler;
      return () => {};
    },
  };
}
