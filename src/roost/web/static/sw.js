// The service worker: keeps the app's shell (the page, its modules, styles, xterm.js, icons)
// in a cache, so the app installs to a home screen and opens even while rosterd is away.
// Always network first: roost's files have no content hashes, so a cache-first shell would
// keep an old page after an upgrade. The API, the change stream and the terminal sockets are
// never cached (they are live, and the page says so when they are unreachable).

const CACHE = "roost-shell-v1";
const SHELL = [
  "/static/app.js",
  "/static/badges.js",
  "/static/cards.js",
  "/static/keys.js",
  "/static/launcher.js",
  "/static/notify.js",
  "/static/roster.js",
  "/static/sidebar.js",
  "/static/terminal.js",
  "/static/style.css",
  "/static/icon.svg",
  "/static/icon-192.png",
  "/static/vendor/xterm/xterm.mjs",
  "/static/vendor/xterm/xterm.css",
  "/static/vendor/addon-fit/addon-fit.mjs",
  "/static/vendor/addon-web-links/addon-web-links.mjs",
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
