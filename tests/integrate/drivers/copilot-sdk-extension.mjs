// A stand-in for the SDK Copilot CLI bundles: records the hooks and event listeners an extension registers.
export async function joinSession(options) {
  globalThis.copilotHost.hooks = options.hooks || {};
  return {
    sessionId: "cp-1",
    on: (name, handler) => {
      globalThis.copilotHost.listeners[name] = handler;
      return () => {};
    },
  };
}
