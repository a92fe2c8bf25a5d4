// The service worker: keeps the app's shell (the page, its modules, styles, xterm.js, icons)
// in a cache, so the app installs to a home screen and opens even while rosterd is away.
// Always network first: roost's files have no content hashes, so a cache-first shell would
// keep an old page after an upgrade. The API, the change stream and the terminal sockets are
// never cached (they are live, and the page says so when they are unreachable).
//
// It also shows rosterd's Web Push notifications: a push names a session and what it did
// ({session_key, name, state, revision}, and for a session that needs input its request:
// what it asks and the answers rosterd can give; for a budget crossed, the budget's reason;
// never a prompt or a reply); clicking the
// notification brings a Roost window forward (or opens one) and asks it to open that session,
// and its Allow or Deny action answers the request right there.

const CACHE = "roost-shell-v1";
const SHELL = [
  "/static/api.js",
  "/static/app.js",
  "/static/badges.js",
  "/static/cards.js",
  "/static/fork.js",
  "/static/gates.js",
  "/static/headless.js",
  "/static/keys.js",
  "/static/launcher.js",
  "/static/notify.js",
  "/static/request.js",
  "/static/roster.js",
  "/static/seen.js",
  "/static/settings.js",
  "/static/sidebar.js",
  "/static/terminal.js",
  "/static/style.css",
  "/static/icon.svg",
  "/static/icon-192.png",
  "/static/vendor/xterm/xterm.mjs",
  "/static/vendor/xterm/xterm.css",
  "/static/vendor/addon-fit/addon-fit.mjs",
  "/static/vendor/addon-web-links/addon-web-links.mjs",
  "/static/vendor/symbols/symbols.css",
  "/manifest.webmanifest",
];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((name) => name !== CACHE).map((name) => caches.delete(name))))
      .then(() => self.clients.claim()),
  );
});

function isShell(request, url) {
  if (request.method !== "GET" || url.origin !== self.location.origin) return false;
  return request.mode === "navigate" ? url.pathname === "/" : SHELL.includes(url.pathname);
}

async function networkFirst(request) {
  const cache = await caches.open(CACHE);
  try {
    const response = await fetch(request);
    // A redirect to the login page is not the app: never keep it as the shell.
    if (response.ok && !response.redirected) await cache.put(request.mode === "navigate" ? "/" : request, response.clone());
    return response;
  } catch (error) {
    const kept = await cache.match(request.mode === "navigate" ? "/" : request);
    if (kept) return kept;
    throw error;
  }
}

self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (isShell(event.request, url)) event.respondWith(networkFirst(event.request));
});

self.addEventListener("push", (event) => {
  let doc = {};
  try {
    doc = event.data ? event.data.json() : {};
  } catch {
    doc = {};
  }
  const key = typeof doc.session_key === "string" ? doc.session_key : "";
  const name = doc.name || key || "a session";
  const request = doc.state === "needs input" && doc.request && typeof doc.request === "object" ? doc.request : null;
  const asks = request && typeof request.asks === "string" ? ` — ${request.asks}` : "";
  const spent = typeof doc.budget === "string" && BUDGETS.includes(doc.state) ? ` — ${doc.budget}` : "";
  // A request rosterd can answer gets its answers on the notification itself (where the
  // browser shows actions); tapping the notification opens the session onto the request.
  const offered = request && Array.isArray(request.answers) ? request.answers : [];
  const actions = ACTIONS.filter((action) => offered.includes(action.action));
  // A repeat for the same session replaces the notification before it (same tag).
  event.waitUntil(
    self.registration.showNotification("Roost", {
      body: `${name}: ${TOLD.includes(doc.state) ? doc.state : "needs input"}${asks}${spent}`,
      tag: key || "roost",
      data: { key, request: request && typeof request.id === "string" ? request.id : null },
      icon: "/static/icon-192.png",
      actions,
      requireInteraction: actions.length > 0,
    }),
  );
});

// What a push may say a session did, in the words the page uses for its states, and what a
// budget its turn crossed makes of it.
const BUDGETS = ["near budget", "over budget"];
const TOLD = ["needs input", "done", "error", ...BUDGETS];

// The answers a notification may carry, at most two (what most browsers show).
const ACTIONS = [
  { action: "allow", title: "Allow" },
  { action: "reject", title: "Deny" },
];

// Answer a request from its notification; false when rosterd refused (answered elsewhere
// meanwhile, say), and then the session is opened instead so the person sees where it stands.
async function answer(key, request, option) {
  try {
    const response = await fetch(`/sessions/${encodeURIComponent(key)}/permission`, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ option, request_id: request }),
    });
    return response.ok;
  } catch {
    return false;
  }
}

async function openSession(key) {
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const mine = windows.filter((client) => new URL(client.url).origin === self.location.origin);
  const client = mine.find((candidate) => candidate.focused) || mine[0];
  if (!client) {
    // A new window may not listen yet: it reads the session from its address instead.
    await self.clients.openWindow(key ? `/?open=${encodeURIComponent(key)}` : "/");
    return;
  }
  // The window is told which session to show even when it may not be focused (a browser
  // can refuse focus): it opens there, ready when the person looks.
  if (key) client.postMessage({ type: "open-session", session_key: key });
  try {
    await client.focus();
  } catch {
    // refused: the session is open in that window all the same
  }
}

// A notification's data: {key, request}; an older one's is the key alone.
function dataOf(notification) {
  const data = notification.data;
  return typeof data === "string" ? { key: data, request: null } : data || { key: "", request: null };
}

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const { key, request } = dataOf(event.notification);
  const chosen = ACTIONS.find((action) => action.action === event.action);
  if (chosen && key && request) {
    event.waitUntil(answer(key, request, chosen.action).then((done) => (done ? undefined : openSession(key))));
    return;
  }
  event.waitUntil(openSession(key));
});
