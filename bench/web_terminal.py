"""Benchmark the web terminal: Roost's against Jupyter's ``terminado``, both in xterm.js in Chromium.

Both sides draw with the same vendored xterm.js (``src/roost/faces/web/static/vendor``) and the same
terminal options, in headless Debian Chromium driven by Playwright, at the same box size:

- **Roost**: a bash in a tmux pane of a throwaway server, through a real ``rosterd`` and
  Roost's own ``static/terminal.js`` (``TerminalView``), put in a box over the app page as the
  daemon serves it (a page from anywhere else may not open a socket to 127.0.0.1: Chromium's
  local network access checks). The context bypasses the page's CSP only so Playwright may poll.
- **terminado**: a bash on a PTY, through a minimal tornado app (this script run with
  ``--serve-terminado PORT``, a separate process) whose page speaks terminado's JSON protocol.

Measured, alternating the two each round:

1. throughput: ``cat`` of a 20 MB text file until a line printed after it is in xterm's buffer
   (checked on every ``onWriteParsed`` and every 50 ms), MB/s; a cat not done in 20 s counts as
   stalled (0), and Roost's repaints (``reset``: the view fell more than its backlog behind and
   skipped to the pane's screen) are counted, since a repainted run did not draw every byte;
2. echo: one key pressed at the bash prompt, from xterm's ``onData`` to the character in the
   buffer at the cursor's old place, timed in the page with ``performance.now()``;
3. idle: 20 terminal WebSockets open on each side (browser-less, drained), 30 s: CPU of the
   server process and its live children (rosterd's tmux control clients; terminado's shells)
   as a percent of one core, both over the same 30 s.

Run: ``.venv/bin/python bench/web_terminal.py [--rounds N] [--budget SECONDS] [--idle SECONDS]``
(needs the ``bench`` extra: ``pip install -e .[bench]``). Stops by itself in about 2–3 minutes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shlex
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import psutil
from common import PYTHON, ROOT, Sandbox, free_port, p90, wait_for

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VENDOR = ROOT / "src" / "roost" / "web" / "static" / "vendor"
SHELL = ["env", "PS1=$ ", "bash", "--norc", "--noprofile"]
FILE_MB = 20
MARK = "END$((6*7))MARK"
"""Typed after the ``cat``; the shell prints ``END42MARK``, which the typed line does not hold."""
SEEN = "END42MARK"
KEYS = "abcdefghijklmnopqrstuvwxy"
IDLE_TERMINALS = 20
STALL = 20
"""Seconds a cat may take before it counts as stalled (0 MB/s)."""
AIM_ECHO = 1.2
AIM_IDLE = 1.0

# The terminal options of static/terminal.js, so both sides parse and draw alike.
TERMINAL_OPTIONS = """{
  cursorBlink: true,
  fontFamily: '"DejaVu Sans Mono", "Liberation Mono", Menlo, Consolas, monospace',
  fontSize: 14, lineHeight: 1.1, scrollback: 5000,
  theme: { background: "#11151c", foreground: "#d8dee9", cursor: "#e5c07b", selectionBackground: "#3b4252" },
}"""

# Page-side measuring, the same on both pages: needs ``window.bench = {term, type, ready}``.
TOOLS = """
const tools = {
  echoes: [], pending: null,
  line() {
    const buf = bench.term.buffer.active;
    return buf.getLine(buf.baseY + buf.cursorY).translateToString(true);
  },
  screen() {
    const buf = bench.term.buffer.active;
    const lines = [];
    for (let y = 0; y < buf.length; y++) lines.push(buf.getLine(y).translateToString(true));
    return lines.join("\\n").trim();
  },
  found(mark) {
    const buf = bench.term.buffer.active;
    const last = buf.baseY + buf.cursorY;
    // The rows near the cursor as logical lines: a soft-wrapped row continues the one above.
    let text = "";
    for (let y = Math.max(0, last - 8); y <= last; y++) {
      const line = buf.getLine(y);
      if (!line) continue;
      text += (line.isWrapped ? "" : "\\n") + line.translateToString(true);
    }
    return text.includes(mark);
  },
  throughput(command, mark, timeoutMs) {
    const started = performance.now();
    bench.type(command + "\\r");
    return new Promise((resolve) => {
      let hook = null, timer = null;
      const check = () => {
        const elapsed = performance.now() - started;
        if (tools.found(mark) || elapsed > timeoutMs) {
          hook.dispose(); clearInterval(timer);
          resolve(tools.found(mark) ? elapsed : -1);
        }
      };
      hook = bench.term.onWriteParsed(check);
      timer = setInterval(check, 50);
    });
  },
  armEcho() {
    const term = bench.term;
    term.onData((data) => {
      if (data.length !== 1 || data < " ") return;
      const buf = term.buffer.active;
      tools.pending = { ch: data, x: buf.cursorX, y: buf.baseY + buf.cursorY, t0: performance.now() };
    });
    term.onWriteParsed(() => {
      const p = tools.pending;
      if (!p) return;
      const line = term.buffer.active.getLine(p.y);
      const cell = line && line.getCell(p.x);
      if (cell && cell.getChars() === p.ch) {
        tools.echoes.push(performance.now() - p.t0);
        tools.pending = null;
      }
    });
  },
};
window.tools = tools;
"""

PAGE_STYLE = """<style>html, body { margin: 0; height: 100%; background: #11151c; }
#box { position: absolute; inset: 0; }</style>"""

ROOST_PAGE = f"""async (pane) => {{
  const box = document.createElement("div");
  box.id = "box";
  box.style.cssText = "position: fixed; inset: 0; z-index: 1000; background: #11151c";
  document.body.append(box);
  const {{ TerminalView }} = await import("/static/terminal.js");
  const view = new TerminalView(pane, box);
  const reset = view.term.reset.bind(view.term);
  window.resets = 0;
  view.term.reset = () => {{ window.resets += 1; reset(); }};
  window.bench = {{
    term: view.term,
    type: (data) => view.send({{ type: "input", data }}),
    ready: () => view.state === "open",
  }};
{TOOLS}
}}"""
"""Put on Roost's own page (the app, as served): Roost's TerminalView in a box over the app."""

TERMINADO_PAGE = f"""<!doctype html><html><head><meta charset="utf-8">
<link rel="stylesheet" href="/vendor/xterm/xterm.css">{PAGE_STYLE}</head>
<body><div id="box"></div><script type="module">
import {{ Terminal }} from "/vendor/xterm/xterm.mjs";
import {{ FitAddon }} from "/vendor/addon-fit/addon-fit.mjs";
import {{ WebLinksAddon }} from "/vendor/addon-web-links/addon-web-links.mjs";
const term = new Terminal({TERMINAL_OPTIONS});
const fit = new FitAddon();
term.loadAddon(fit);
term.loadAddon(new WebLinksAddon());
term.open(document.getElementById("box"));
fit.fit();
let output = false;
const socket = new WebSocket(`ws://${{location.host}}/websocket`);
const send = (message) => socket.readyState === WebSocket.OPEN && socket.send(JSON.stringify(message));
socket.addEventListener("open", () => send(["set_size", term.rows, term.cols]));
socket.addEventListener("message", (event) => {{
  const message = JSON.parse(event.data);
  if (message[0] === "stdout") {{ output = true; term.write(message[1]); }}
}});
term.onData((data) => send(["stdin", data]));
const resize = (cols, rows) => {{ term.resize(cols, rows); send(["set_size", rows, cols]); }};
window.bench = {{ term, type: (data) => send(["stdin", data]), ready: () => output, resize }};
{TOOLS}
</script></body></html>"""


def serve_terminado(port: int) -> None:
    """The baseline server: terminado's own socket handler, one bash per socket, and the page."""
    import tornado.ioloop
    import tornado.web
    from terminado import TermSocket, UniqueTermManager

    manager = UniqueTermManager(shell_command=SHELL)

    class Page(tornado.web.RequestHandler):
        def get(self) -> None:
            self.write(TERMINADO_PAGE)

    app = tornado.web.Application(
        [
            (r"/websocket", TermSocket, {"term_manager": manager}),
            (r"/vendor/(.*)", tornado.web.StaticFileHandler, {"path": str(VENDOR)}),
            (r"/", Page),
        ]
    )
    app.listen(port, "127.0.0.1")
    tornado.ioloop.IOLoop.current().start()


def text_file(path: Path, megabytes: int) -> None:
    """Printable lines of words, ``megabytes`` MB of them (never the sentinel)."""
    rng = random.Random(7)
    words = ["roost", "tmux", "pane", "agent", "xterm", "socket", "bytes", "scroll", "shell", "output"]
    lines = [" ".join(rng.choice(words) for _ in range(14)) + f" {i:06d}" for i in range(2000)]
    block = ("\n".join(lines) + "\n").encode()
    with path.open("wb") as out:
        written = 0
        while written < megabytes * 1_000_000:
            chunk = block[: megabytes * 1_000_000 - written]
            if len(chunk) < len(block):
                # Whole lines only: a last line without its newline would run into the sentinel.
                out.write(chunk[: chunk.rindex(b"\n") + 1])
                break
            out.write(chunk)
            written += len(chunk)


def cpu_seconds(proc: psutil.Process) -> dict[int, float]:
    """User + system CPU of ``proc`` and each live descendant, by pid."""
    seconds: dict[int, float] = {}
    for each in [proc, *proc.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            times = each.cpu_times()
            seconds[each.pid] = times.user + times.system
    return seconds


class Meter:
    """CPU seconds a process has used so far; with ``children``, its live descendants' too
    (only those whose name holds ``named``, when given)."""

    def __init__(self, proc: psutil.Process, children: bool = False, named: str = "") -> None:
        self.proc, self.children, self.named = proc, children, named

    def read(self) -> float:
        procs = [*([] if self.named else [self.proc])]
        if self.children:
            procs += [p for p in self.proc.children(recursive=True) if self.named in p.name()]
        total = 0.0
        for proc in procs:
            with contextlib.suppress(psutil.Error):
                times = proc.cpu_times()
                total += times.user + times.system
        return total


def box_tmux_pid(box: Sandbox) -> int:
    return int(box.tmux("display-message", "-p", "#{pid}").strip())


def used(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds spent between two readings by the processes alive at both."""
    return sum(after[pid] - before[pid] for pid in before if pid in after)


class Drained:
    """Terminal WebSockets kept open and read on threads, as idle browser tabs would be."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []
        self.opened = 0
        self.answered = 0
        self.lock = threading.Lock()

    def open(self, url: str, headers: dict[str, str], first: str | None = None) -> None:
        from websockets.exceptions import ConnectionClosed
        from websockets.sync.client import connect

        ws = connect(url, additional_headers=headers, open_timeout=20)
        self.opened += 1

        def drain() -> None:
            with ws:
                if first:
                    ws.send(first)
                answered = False
                while not self.stop.is_set():
                    try:
                        ws.recv(timeout=0.5)
                    except TimeoutError:
                        continue
                    except ConnectionClosed:
                        return
                    if not answered:
                        answered = True
                        with self.lock:
                            self.answered += 1

        thread = threading.Thread(target=drain, daemon=True)
        thread.start()
        self.threads.append(thread)

    def close(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(5)


def start_daemon(box: Sandbox, port: int) -> tuple[subprocess.Popen[bytes], str]:
    """A rosterd on ``port``, and a one-time login link from its socket."""
    config = box.root / "config" / "roost"
    config.mkdir(parents=True, exist_ok=True)
    (config / "rosterd.toml").write_text(f"[node]\nloopback_port = {port}\nhook_port = 0\n")
    sock = box.root / "run" / "roost" / "rosterd.sock"
    proc = subprocess.Popen(
        [str(PYTHON), "-m", "roost.daemon"], env=box.env, stderr=(box.root / "rosterd.log").open("wb")
    )
    link: list[str] = []

    def ask() -> bool:
        if proc.poll() is not None:
            log = (box.root / "rosterd.log").read_text()[-800:]
            sys.exit(f"bench: rosterd exited {proc.returncode}: {log}")
        try:
            response = unix(sock).post("/login-link", timeout=5)
        except httpx.TransportError:
            return False
        if response.status_code == 200:
            link.append(str(response.json()["url"]))
        return bool(link)

    wait_for(ask, timeout=30, what="rosterd to answer")
    return proc, link[0]


def open_page(browser: Any, url: str, pane: str | None = None) -> Any:
    context = browser.new_context(viewport={"width": 1200, "height": 760}, bypass_csp=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(url)
    if pane:
        page.wait_for_load_state("load")
        page.evaluate(ROOST_PAGE, pane)
    try:
        page.wait_for_function("window.bench && window.tools && bench.ready()", timeout=20_000)
    except Exception:
        sys.exit(f"bench: the page at {url} did not connect: {errors}")
    try:
        page.wait_for_function("tools.line().trimEnd().endsWith('$')", timeout=20_000)
    except Exception:
        sys.exit(f"bench: no prompt at {url}: {page.evaluate('tools.screen()')!r} {errors}")
    if [error for error in errors if "404 (Not Found)" not in error]:  # a 404: the favicon
        sys.exit(f"bench: the page at {url} reported {errors}")
    page.evaluate("bench.term.focus(); tools.armEcho()")
    return page


def throughput(page: Any, path: Path, timeout: float = STALL) -> float:
    """MB/s of one ``cat`` of ``path`` into the page's terminal; 0 when it timed out."""
    command = f"cat {path}; echo {MARK}"
    ms = page.evaluate(f"tools.throughput({json.dumps(command)}, {json.dumps(SEEN)}, {timeout * 1000})")
    page.keyboard.press("Control+L")
    page.wait_for_timeout(300)
    return path.stat().st_size / 1e6 / (ms / 1000) if ms > 0 else 0.0


def echoes(page: Any, keys: str) -> None:
    """Press each key at the prompt and wait until the page timed its echo; then clear the line."""
    for key in keys:
        count = page.evaluate("tools.echoes.length")
        page.keyboard.press(key)
        page.wait_for_function(f"tools.echoes.length > {count}", timeout=10_000)
        page.wait_for_timeout(random.uniform(20, 40))
    page.keyboard.press("Control+U")
    page.wait_for_function("bench.term.buffer.active.cursorX <= 2", timeout=10_000)


def percent(seconds: float, wall: float) -> float:
    return 100 * seconds / wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4, help="rounds of throughput and of echo")
    parser.add_argument("--budget", type=float, default=75, help="seconds of timed rounds at most")
    parser.add_argument("--idle", type=float, default=30, help="seconds the idle terminals are watched")
    parser.add_argument("--serve-terminado", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_terminado:
        serve_terminado(args.serve_terminado)
        return
    from playwright.sync_api import sync_playwright

    began = time.monotonic()
    with Sandbox() as box, contextlib.ExitStack() as stack:
        shell_env = {**box.env, "SHELL": "/bin/bash"}
        pane = box.start(f"cd {box.root} && exec {shlex.join(SHELL)}")
        idle_panes = box.windows(IDLE_TERMINALS, f"exec {shlex.join(SHELL)}")
        big, small = box.root / "big.txt", box.root / "warm.txt"
        text_file(big, FILE_MB)
        text_file(small, 2)

        port, tport = free_port(), free_port()
        daemon, login = start_daemon(box, port)
        stack.callback(lambda: (daemon.terminate(), daemon.wait(10)))
        terminado = subprocess.Popen(
            [str(PYTHON), __file__, "--serve-terminado", str(tport)],
            env=shell_env,
            stderr=(box.root / "terminado.log").open("wb"),
        )
        stack.callback(lambda: (terminado.terminate(), terminado.wait(10)))
        wait_for(lambda: _answers(f"http://127.0.0.1:{tport}/"), timeout=20, what="terminado to answer")

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            pages = {
                "roost": open_page(browser, login, pane),
                "terminado": open_page(browser, f"http://127.0.0.1:{tport}/"),
            }
            for name, page in pages.items():
                if not throughput(page, small):
                    shown = page.evaluate("[window.resets || 0, tools.screen().slice(-160)]")
                    print(f"{name}: the warm-up cat stalled ({STALL}s); repaints, screen's end: {shown}")
                echoes(page, "abc")
                page.evaluate("tools.echoes.length = 0")
            # tmux decides the pane's size; terminado's terminal is made the same, so both wrap
            # the file's lines alike and scroll the same number of rows.
            cols, rows = pages["roost"].evaluate("[bench.term.cols, bench.term.rows]")
            pages["terminado"].evaluate(f"bench.resize({cols}, {rows})")
            pages["terminado"].keyboard.press("Control+L")
            sizes = {name: p.evaluate("[bench.term.cols, bench.term.rows]") for name, p in pages.items()}
            print(f"terminal sizes: {sizes}; {FILE_MB} MB file; setup {time.monotonic() - began:.1f}s")
            meters = {
                "rosterd": Meter(psutil.Process(daemon.pid), children=True),
                "tmux server": Meter(psutil.Process(box_tmux_pid(box))),
                "terminado": Meter(psutil.Process(terminado.pid), children=True),
                "chromium": Meter(psutil.Process(), children=True, named="chrom"),
            }
            spent: dict[str, dict[str, list[float]]] = {name: {m: [] for m in meters} for name in pages}

            rates: dict[str, list[float]] = {name: [] for name in pages}
            repaints: dict[str, list[int]] = {name: [] for name in pages}
            stop = time.monotonic() + args.budget
            for i in range(args.rounds):
                order = list(pages) if i % 2 == 0 else list(pages)[::-1]
                for name in order:
                    before = {m: meter.read() for m, meter in meters.items()}
                    resets = pages[name].evaluate("window.resets || 0")
                    rates[name].append(throughput(pages[name], big))
                    repaints[name].append(pages[name].evaluate("window.resets || 0") - resets)
                    for m, meter in meters.items():
                        spent[name][m].append(meter.read() - before[m])
                    echoes(pages[name], KEYS)
                done = ", ".join(f"{n} {rates[n][-1]:.1f} MB/s" for n in pages)
                print(f"round {i + 1}: {done}", flush=True)
                if time.monotonic() > stop and i >= 1:
                    break
            echo = {name: page.evaluate("tools.echoes") for name, page in pages.items()}
            browser.close()

        idle = measure_idle(box, port, tport, idle_panes, daemon.pid, terminado.pid, args.idle)
    results(rates, echo, idle, repaints)
    print(f"\nrepaints (reset: output dropped, screen recaptured) per 20 MB cat: {repaints}")
    print("\nCPU seconds during one 20 MB cat (median), by process:")
    for name, by in spent.items():
        print(f"  {name:10} " + "  ".join(f"{m} {statistics.median(v):.2f}" for m, v in by.items()))
    print(f"total {time.monotonic() - began:.0f}s")


def unix(sock: Path) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(uds=str(sock)), base_url="http://rosterd")


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def measure_idle(
    box: Sandbox, port: int, tport: int, panes: list[str], daemon: int, terminado: int, seconds: float
) -> dict[str, float]:
    """Open 20 terminal sockets on each side, let them settle, and read CPU over ``seconds``."""
    with httpx.Client(base_url=f"http://127.0.0.1:{port}") as http:
        login = _login_link(box)
        cookie = http.get(login.removeprefix(f"http://127.0.0.1:{port}")).cookies[f"roost_session_{port}"]
    headers = {"Cookie": f"roost_session_{port}={cookie}", "Origin": f"http://127.0.0.1:{port}"}
    sockets = Drained()
    try:
        for pane in panes:
            url = f"ws://127.0.0.1:{port}/ws/terminal/{pane.replace('%', '%25')}?cols=120&rows=40"
            sockets.open(url, headers)
            sockets.open(f"ws://127.0.0.1:{tport}/websocket", {}, json.dumps(["set_size", 40, 120]))
        time.sleep(5)
        procs = {
            "roost": psutil.Process(daemon),
            "terminado": psutil.Process(terminado),
            "tmux server": psutil.Process(box_tmux_pid(box)),
        }
        before = {name: cpu_seconds(proc) for name, proc in procs.items()}
        children = {name: len(proc.children(recursive=True)) for name, proc in procs.items()}
        start = time.monotonic()
        time.sleep(seconds)
        wall = time.monotonic() - start
        after = {name: cpu_seconds(proc) for name, proc in procs.items()}
    finally:
        sockets.close()
    print(
        f"idle: {sockets.opened} sockets open, {sockets.answered} answered; children {children}; {wall:.1f}s"
    )
    return {name: percent(used(before[name], after[name]), wall) for name in procs}


def _login_link(box: Sandbox) -> str:
    with unix(box.root / "run" / "roost" / "rosterd.sock") as http:
        return str(http.post("/login-link", timeout=5).json()["url"])


def met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def results(
    rates: dict[str, list[float]],
    echo: dict[str, list[float]],
    idle: dict[str, float],
    repaints: dict[str, list[int]],
) -> None:
    print(f"\nthroughput, cat of {FILE_MB} MB until the line after it is in the buffer (MB/s, per round):")
    for name, values in rates.items():
        shown = ", ".join(f"{v:.1f}" if v else "stalled" for v in values)
        print(f"  {name:10} median {statistics.median(values):6.1f}   [{shown}]")
    ratio = statistics.median(rates["roost"]) / statistics.median(rates["terminado"])
    skipped = sum(1 for count in repaints["roost"] if count)
    runs = len(repaints["roost"])
    caveat = f" ({skipped} of {runs} Roost runs skipped ahead by a repaint)" if skipped else ""
    print(f"  roost / terminado {ratio:.2f}x  aim >= 1.0: {met(ratio >= 1.0)}{caveat}")

    print("\necho, key at a bash prompt: onData to the character in the buffer (ms):")
    for name, values in echo.items():
        print(f"  {name:10} p50 {statistics.median(values):6.2f}  p90 {p90(values):6.2f}  n={len(values)}")
    p50 = statistics.median(echo["roost"]) / statistics.median(echo["terminado"])
    tail = p90(echo["roost"]) / p90(echo["terminado"])
    print(f"  roost / terminado p50 {p50:.2f}x, p90 {tail:.2f}x")
    print(f"  aim p50 <= {AIM_ECHO}x terminado's: {met(p50 <= AIM_ECHO)}")

    print(f"\nidle, {IDLE_TERMINALS} terminal sockets each (% of one core, process + live children):")
    for name, value in idle.items():
        print(f"  {name:12} {value:.2f}%")
    print(f"  rosterd aim < {AIM_IDLE}%: {met(idle['roost'] < AIM_IDLE)}")


if __name__ == "__main__":
    main()
