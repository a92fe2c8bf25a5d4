// Settings → Notifications: the system's notifications on this device through Web Push, and a
// sound with the page's own pop-ups (notify.js reads it from localStorage). Two settings, each
// one checkbox, with words that cannot be taken for each other.
//
// Turning system notifications on asks the browser's permission, which browsers grant only
// from a person's click: so it happens when the person ticks the box and nowhere else. Then
// this device subscribes with rosterd's VAPID key (GET /push/vapid-key) and hands the
// subscription to rosterd (POST /push/subscribe); turning it off forgets it on both sides
// (DELETE /push/subscribe). While subscribed, the device tells rosterd which session its
// active tab shows (POST /push/viewing), so the session in view never buzzes.

import { setSound, soundOn } from "./notify.js";

const $ = (id) => document.getElementById(id);
// A browser with no reachable push service may never settle a subscribe call.
const SUBSCRIBE_MS = 20000;

function withTimeout(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

// A base64url VAPID key as the bytes pushManager.subscribe wants.
function keyBytes(text) {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (text.length % 4)) % 4);
  return Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
}

async function send(method, path, body) {
  const response = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) {
    const doc = await response.json().catch(() => ({}));
    throw new Error(doc.error || `${path}: HTTP ${response.status}`);
  }
  return response;
}

// rosterd forgets a push the moment someone opens the session (even on another device).
export function markSeen(sessionKey) {
  return send("POST", `/sessions/${encodeURIComponent(sessionKey)}/seen`).catch((error) =>
    console.warn("seen:", error.message),
  );
}

export class Settings {
  // `session()`: the session key this tab's active terminal shows, or null.
  constructor(dialog, { session }) {
    this.dialog = dialog;
    this.session = session;
    this.endpoint = null; // this device's push endpoint, while subscribed
    this.known = false; // whether start() has learnt the endpoint (until then it may replace it)
    for (const button of document.querySelectorAll(".open-settings")) {
      button.addEventListener("click", () => this.open());
    }
    $("settings-close").addEventListener("click", () => dialog.close());
    $("notify-sound").addEventListener("change", (event) => setSound(event.target.checked));
    $("push-enabled").addEventListener("change", (event) => {
      if (event.target.checked) this.turnOn();
      else this.turnOff();
    });
  }

  supported() {
    return "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
  }

  async registration() {
    return navigator.serviceWorker.ready;
  }

  // Learn whether this device is already subscribed (a page load after subscribing).
  async start() {
    if (!this.supported()) {
      this.known = true;
      return this.render();
    }
    const subscription = await (await this.registration()).pushManager.getSubscription();
    this.endpoint = subscription ? subscription.endpoint : null;
    this.known = true;
    this.render();
    if (this.endpoint) this.viewing();
  }

  open() {
    $("notify-sound").checked = soundOn();
    this.render();
    this.dialog.showModal();
  }

  say(text) {
    $("push-status").textContent = text;
  }

  render() {
    $("push-enabled").checked = this.endpoint !== null;
    $("push-enabled").disabled = !this.supported();
    if (!this.supported()) this.say("This browser cannot show system notifications.");
  }

  async turnOn() {
    this.say("");
    $("push-enabled").disabled = true;
    try {
      const permission = await Notification.requestPermission();
      if (permission !== "granted") {
        this.say("Notifications are blocked for this site: allow them in the browser's site settings.");
        return;
      }
      const { key } = await (await send("GET", "/push/vapid-key")).json();
      const registration = await this.registration();
      let subscription;
      try {
        subscription = await withTimeout(
          registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(key) }),
          SUBSCRIBE_MS,
          "the push service",
        );
      } catch (error) {
        this.say(`This browser could not subscribe to push messages: ${error.message}`);
        return;
      }
      await send("POST", "/push/subscribe", { ...subscription.toJSON(), viewing: this.session() });
      this.endpoint = subscription.endpoint;
      this.say("System notifications are on for this device.");
    } catch (error) {
      this.say(`Could not turn notifications on: ${error.message}`);
    } finally {
      this.render();
    }
  }

  async turnOff() {
    const endpoint = this.endpoint;
    this.endpoint = null;
    try {
      const subscription = await (await this.registration()).pushManager.getSubscription();
      if (subscription) await subscription.unsubscribe();
      if (endpoint) await send("DELETE", "/push/subscribe", { endpoint });
      this.say("System notifications are off for this device.");
    } catch (error) {
      this.say(`Could not turn notifications off: ${error.message}`);
    }
    this.render();
  }

  // The active tab changed (or came back into view): tell rosterd what this device shows.
  viewing() {
    if (!this.endpoint) return;
    send("POST", "/push/viewing", { endpoint: this.endpoint, session: this.session() }).catch((error) =>
      console.warn("viewing:", error.message),
    );
  }
}
