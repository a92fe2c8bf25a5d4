// One pane in an xterm.js terminal, over GET /ws/terminal/{pane} (the protocol is described in
// src/roost/api/terminal.py), or another node's, over GET /ws/swarm/{node}/terminal/{key}: the
// same protocol, relayed by this node (src/roost/api/relayed.py).
//
// The pane is shared (a person in `tmux attach`, other tabs), so its size is tmux's to decide:
// this terminal asks for the size that fits its box and then draws at whatever size the
// server says the pane has ("reset" and "size" messages), never at a size it only guessed,
// so a program's output always lands where the program meant it.

import { Terminal } from "./vendor/xterm/xterm.mjs";
import { FitAddon } from "./vendor/addon-fit/addon-fit.mjs";
import { WebLinksAddon } from "./vendor/addon-web-links/addon-web-links.mjs";

const THEME = {
  background: "#11151c",
  foreground: "#d8dee9",
  cursor: "#e5c07b",
  selectionBackground: "#3b4252",
};
const RETRY_MS = [500, 1000, 2000, 5000, 10000];
const FINAL_CODES = new Set([1000, 1008, 1009]); // closed on purpose: do not reconnect

// The page's monospace fonts (style.css --mono), with the symbols agents draw that the usual
// fonts lack: without them Chromium on a plain Debian draws Claude's ⏵⏵ and ⎿ as empty boxes.
function monoFonts() {
  return getComputedStyle(document.documentElement).getPropertyValue("--mono").trim() || "monospace";
}

export class TerminalView extends EventTarget {
  // ``filter`` rewrites keys typed on the keyboard before they are sent (the key row's Ctrl);
  // ``path``: the WebSocket's path, when it is not this node's pane ``pane``.
  constructor(pane, box, { filter = (data) => data, path = `/ws/terminal/${encodeURIComponent(pane)}` } = {}) {
    super();
    this.pane = pane;
    this.path = path;
    this.box = box;
    this.state = "connecting"; // connecting | open | closed | disconnected
    this.reason = "";
    this.asked = null;
    this.retries = 0;
    this.socket = null;
    this.term = new Terminal({
      cursorBlink: true,
      fontFamily: monoFonts(),
      fontSize: 14,
      lineHeight: 1.1, // room for underscores: at 1.0 the DOM renderer clips them
      scrollback: 5000,
      theme: THEME,
    });
    this.fit = new FitAddon();
    this.term.loadAddon(this.fit);
    this.term.loadAddon(new WebLinksAddon());
    // The terminal fills a box of its own, below whatever else the view shows (on a phone, the
    // request it waits on), and is fitted to that box alone.
    this.screen = document.createElement("div");
    this.screen.className = "screen";
    box.append(this.screen);
    this.term.open(this.screen);
    this.term.onData((data) => this.send({ type: "input", data: filter(data) }));
    this.term.onBinary((data) => this.send({ type: "input", data, binary: true }));
    // Paste goes to tmux as a paste (bracketed when the program asked for it: tmux knows
    // whether it did, this page cannot), not as typed keys.
    box.addEventListener("paste", (event) => this.onPaste(event), { capture: true });
    this.resizing = null;
    this.observer = new ResizeObserver(() => this.scheduleResize());
    this.observer.observe(this.screen);
    this.connect();
  }

  setState(state, reason = "") {
    this.state = state;
    this.reason = reason;
    this.box.dataset.state = state;
    this.dispatchEvent(new Event("state"));
  }

  wanted() {
    const dims = this.box.offsetParent === null ? null : this.fit.proposeDimensions();
    if (!dims || !Number.isFinite(dims.cols) || !Number.isFinite(dims.rows)) return null;
    return { cols: Math.max(2, dims.cols), rows: Math.max(2, dims.rows) };
  }

  connect() {
    const size = this.wanted();
    const query = size ? `?cols=${size.cols}&rows=${size.rows}` : "";
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const socket = new WebSocket(`${scheme}://${location.host}${this.path}${query}`);
    socket.binaryType = "arraybuffer";
    this.socket = socket;
    this.asked = size;
    this.setState("connecting");
    socket.addEventListener("open", () => {
      this.retries = 0;
      this.setState("open");
    });
    socket.addEventListener("message", (event) => this.onMessage(event));
    socket.addEventListener("close", (event) => this.onClose(event));
  }

  onMessage(event) {
    if (typeof event.data !== "string") {
      this.term.write(new Uint8Array(event.data));
      return;
    }
    const message = JSON.parse(event.data);
    if (message.type === "reset") {
      this.term.reset();
      this.term.resize(message.cols, message.rows);
    } else if (message.type === "size") {
      this.term.resize(message.cols, message.rows);
    } else if (message.type === "closed") {
      this.setState("closed", message.reason);
    }
  }

  onClose(event) {
    if (this.socket !== null && event.target !== this.socket) return;
    if (this.state === "closed") return;
    if (FINAL_CODES.has(event.code)) {
      this.setState("closed", event.reason || "the connection closed");
      return;
    }
    const delay = RETRY_MS[Math.min(this.retries, RETRY_MS.length - 1)];
    this.retries += 1;
    this.setState("disconnected", event.reason ? `reconnecting… (${event.reason})` : "reconnecting…");
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  send(message) {
    if (this.socket && this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }

  // Keys from outside the terminal (the phone's key row), as if typed.
  sendKeys(data) {
    this.send({ type: "input", data });
  }

  onPaste(event) {
    const text = event.clipboardData ? event.clipboardData.getData("text/plain") : "";
    event.preventDefault();
    event.stopImmediatePropagation();
    if (text) this.send({ type: "input", data: text.replace(/\r?\n/g, "\r"), paste: true });
  }

  scheduleResize() {
    clearTimeout(this.resizing);
    this.resizing = setTimeout(() => this.sendResize(), 80);
  }

  sendResize() {
    const size = this.wanted();
    if (!size || (this.asked && this.asked.cols === size.cols && this.asked.rows === size.rows)) return;
    this.asked = size;
    this.send({ type: "resize", cols: size.cols, rows: size.rows });
  }

  focus() {
    this.term.focus();
    this.scheduleResize();
  }

  dispose() {
    clearTimeout(this.retryTimer);
    clearTimeout(this.resizing);
    this.observer.disconnect();
    this.state = "closed";
    if (this.socket) this.socket.close(1000, "tab closed");
    this.term.dispose();
  }
}
