"""Benchmark ``rosterd daemon``: how fast it rebuilds its roster, and what it costs when idle.

A server of 50 badged panes (the options an agent's hooks leave behind) is built once. The
daemon is then started and killed with SIGKILL again and again; each start reports how long
its rebuild took (one ``list-panes -a`` plus one process scan) in ``/status``, set beside a
bare ``tmux list-panes -a`` timed in the same rounds. Then a pane running a fake TUI prints
one recorded Claude screen after another (working, permission, …) and each round times how
long from asking it to (one ``send-keys``) until the daemon's ``GET /changes`` stream carries
the new activity, set beside a bare ``tmux capture-pane -p -e`` of that pane in the same rounds
(screen detection costs at least one such capture). Last, one daemon is left idle with the
default 2 s scan interval and its CPU time (its tmux children included) is read.

Run: ``.venv/bin/python bench/rosterd.py [--runs N] [--idle SECONDS]``
"""

from __future__ import annotations

import argparse
import json
import queue
import signal
import statistics
import subprocess
import threading
import time
from pathlib import Path

import httpx
import psutil
from common import PYTHON, TMUX, Sandbox, free_port, p90, screen_tui, wait_for

PANES = 50
STATES = ("working", "blocked", "done", "idle", "error")
SCREEN_ACTIVITY = {"working": "active", "permission": "needs_attention"}


def status(sock: Path) -> dict | None:
    try:
        with httpx.Client(transport=httpx.HTTPTransport(uds=str(sock)), base_url="http://rosterd") as client:
            response = client.get("/status", timeout=5)
    except httpx.TransportError:
        return None
    return response.json() if response.status_code == 200 else None


def start(box: Sandbox) -> tuple[subprocess.Popen[bytes], dict, float]:
    """A daemon, its first /status, and seconds from spawn to that answer."""
    sock = box.root / "run" / "roost" / "rosterd.sock"
    spawned = time.monotonic()
    proc = subprocess.Popen([str(PYTHON), "-m", "roost.daemon"], env=box.env, stderr=subprocess.DEVNULL)
    answer: dict = {}
    wait_for(lambda: answer.update(status(sock) or {}) or answer, what="rosterd to answer")
    return proc, answer, time.monotonic() - spawned


def changes(sock: Path, pane: str, into: queue.Queue[tuple[float, str]], opened: threading.Event) -> None:
    """Read ``GET /changes`` until the daemon ends it, queueing (arrival, activity) of ``pane``'s records."""
    transport = httpx.HTTPTransport(uds=str(sock))
    with (
        httpx.Client(transport=transport, base_url="http://rosterd", timeout=None) as client,
        client.stream("GET", "/changes") as response,
    ):
        opened.set()
        for line in response.iter_lines():
            if not line.startswith("data: "):
                continue
            record = json.loads(line[6:]).get("record") or {}
            if (record.get("tmux") or {}).get("pane") == pane:
                into.put((time.monotonic(), record["activity"]))


def screen_latency(box: Sandbox, runs: int) -> None:
    """Screen change to state change on the stream, beside a bare capture of the same pane."""
    sock = box.root / "run" / "roost" / "rosterd.sock"
    pane = box.tmux(
        "new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "main:", "-n", "tui", screen_tui("idle")
    ).strip()
    proc, _, _ = start(box)
    arrived: queue.Queue[tuple[float, str]] = queue.Queue()
    opened = threading.Event()
    threading.Thread(target=changes, args=(sock, pane, arrived, opened), daemon=True).start()
    if not opened.wait(20):
        raise SystemExit("bench: GET /changes did not open")
    follows, captures = [], []
    try:
        for i in range(runs + 2):  # two warm-up rounds
            screen = ("working", "permission")[i % 2]
            began = time.monotonic()
            subprocess.run(
                [TMUX, "-S", box.socket, "capture-pane", "-p", "-e", "-t", pane], capture_output=True
            )
            captured = time.monotonic() - began
            asked = time.monotonic()
            box.tmux("send-keys", "-t", pane, screen, "Enter")
            while True:
                at, activity = arrived.get(timeout=20)
                if activity == SCREEN_ACTIVITY[screen]:
                    break
            if i >= 2:
                follows.append(at - asked)
                captures.append(captured)
    except queue.Empty:
        raise SystemExit("bench: the daemon did not follow the screen within 20 s") from None
    finally:
        proc.terminate()
        proc.wait()
    for name, values in (("screen change to /changes", follows), ("tmux capture-pane -p -e", captures)):
        median, high = statistics.median(values) * 1000, p90(values) * 1000
        print(f"  {name:<26} median {median:7.1f} ms  p90 {high:7.1f} ms")
    ratio = statistics.median(follows) / statistics.median(captures)
    print(f"  screen change / capture-pane: {ratio:.1f}x  ({len(follows)} rounds; includes the send-keys)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--idle", type=float, default=60, help="seconds of idle CPU sampling")
    args = parser.parse_args()

    print(f"rosterd daemon ({PANES} badged panes)")
    with Sandbox() as box:
        config = box.root / "config" / "roost"
        config.mkdir(parents=True)
        (config / "rosterd.toml").write_text(f"[node]\nloopback_port = {free_port()}\nhook_port = 0\n")
        panes = [box.start("sleep 100000"), *box.windows(PANES - 1)]
        for n, pane in enumerate(panes):
            box.set_options(pane, {"@roost-state": STATES[n % len(STATES)], "@roost-since": "1700000000"})
        rebuilds, answers, lists = [], [], []
        for _ in range(args.runs):
            began = time.monotonic()
            subprocess.run([TMUX, "-S", box.socket, "list-panes", "-a"], capture_output=True, check=True)
            lists.append(time.monotonic() - began)
            proc, answer, took = start(box)
            if answer["counts"]["sessions"] < PANES:
                raise SystemExit(f"bench: rebuilt {answer['counts']['sessions']} sessions, not {PANES}")
            rebuilds.append(answer["rebuild"]["ms"] / 1000)
            answers.append(took)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        for name, values in (
            ("rebuild (from /status)", rebuilds),
            ("spawn to first answer", answers),
            ("tmux list-panes -a", lists),
        ):
            median, high = statistics.median(values) * 1000, p90(values) * 1000
            print(f"  {name:<24} median {median:7.1f} ms  p90 {high:7.1f} ms")
        print(f"  rebuild / list-panes: {statistics.median(rebuilds) / statistics.median(lists):.1f}x")
        screen_latency(box, args.runs)

        proc, _, _ = start(box)
        daemon = psutil.Process(proc.pid)
        before, began = sum(daemon.cpu_times()), time.monotonic()
        time.sleep(args.idle)
        used, wall = sum(daemon.cpu_times()) - before, time.monotonic() - began
        print(f"  idle CPU: {100 * used / wall:.2f}% of one core over {wall:.0f} s (scan every 2 s)")
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
