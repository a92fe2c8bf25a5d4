"""Benchmark hook to stream: from an agent's ``rosterd-hook`` starting to its activity change
arriving on a client's already-open ``GET /changes`` stream.

A pane of a throwaway tmux server runs a stand-in harness (this script with ``--drive``): it
waits for an event name on a FIFO, runs the real ``rosterd-hook`` with a Claude-shaped event
on stdin, as a harness would (its ``TMUX`` and ``TMUX_PANE`` are the pane's, and the hook names
the harness, its parent, in the claim it posts), and writes back when it started the hook and
when the hook exited, both on ``CLOCK_MONOTONIC``, which every process shares. The events
alternate ``UserPromptSubmit`` (activity ``active``) and ``Stop`` (``idle``); each round waits
for the pane's session to reach the new activity on the stream.

Baseline, from the same events: the hook process alone, start to exit. Aim: p99 of the time
from the hook's exit to the change's arrival under 50 ms (it may arrive before the hook exits:
the hook posts its claim before it returns).

Run: ``.venv/bin/python bench/daemon_latency.py [--runs N] [--budget SECONDS]``
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
from common import BIN, PYTHON, ROOT, Sandbox, free_port, p90, wait_for

AIM_MS = 50.0
SESSION = "bench-latency-1"
ACTIVITY = {"UserPromptSubmit": "active", "Stop": "idle"}


def drive(inbox: str, outbox: str) -> None:
    """The stand-in harness: one hook per event name read from ``inbox``; timings to ``outbox``."""
    hook = str(BIN / "rosterd-hook")
    with open(inbox) as events, open(outbox, "w") as out:
        for line in events:
            name = line.strip()
            payload = {"hook_event_name": name, "session_id": SESSION, "cwd": str(ROOT)}
            if name == "UserPromptSubmit":
                payload["prompt"] = "go"
            data = json.dumps(payload).encode()
            started = time.monotonic()
            subprocess.run([hook], input=data, stdout=subprocess.DEVNULL, check=False)
            out.write(f"{started} {time.monotonic()}\n")
            out.flush()


def client(sock: Path) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(uds=str(sock)), base_url="http://rosterd", timeout=None)


def session_of(sock: Path, pid: int) -> str | None:
    """The key of the session rooted at ``pid``, once the daemon answers and has it."""
    try:
        with client(sock) as http:
            records = http.get("/snapshot").json()["records"]
    except httpx.TransportError:
        return None
    return next((r["session_key"] for r in records if r["pid"] == pid), None)


def follow(sock: Path, into: queue.Queue[tuple[float, dict]], opened: threading.Event) -> None:
    """Read ``GET /changes`` until the daemon ends it, queueing (arrival, change) of every change."""
    with client(sock) as http, http.stream("GET", "/changes") as response:
        opened.set()
        for line in response.iter_lines():
            if line.startswith("data: "):
                into.put((time.monotonic(), json.loads(line[6:])))


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--budget", type=float, default=60, help="seconds of timing at most")
    parser.add_argument("--drive", nargs=2, metavar=("INBOX", "OUTBOX"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.drive:
        drive(*args.drive)
        return

    print("rosterd: hook to GET /changes")
    with Sandbox() as box:
        config = box.root / "config" / "roost"
        config.mkdir(parents=True)
        (config / "rosterd.toml").write_text(f"[node]\nloopback_port = {free_port()}\nhook_port = 0\n")
        inbox, outbox = box.root / "events.fifo", box.root / "timings.fifo"
        os.mkfifo(inbox)
        os.mkfifo(outbox)
        box.start("sleep 100000")
        pane = box.tmux(
            "new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "main:", "-n", "harness",
            f"exec {PYTHON} {Path(__file__).resolve()} --drive {inbox} {outbox}",
        ).strip()  # fmt: skip
        box.set_options(
            pane, {"@roost-session-id": SESSION, "@roost-harness": "claude", "@roost-state": "done"}
        )
        sock = box.root / "run" / "roost" / "rosterd.sock"
        daemon = subprocess.Popen([str(PYTHON), "-m", "roost.daemon"], env=box.env, stderr=subprocess.DEVNULL)
        try:
            pid, found = int(box.option(pane, "pane_pid")), []
            wait_for(lambda: found.append(session_of(sock, pid)) or found[-1], what="the pane's session")
            key = found[-1]
            arrived: queue.Queue[tuple[float, dict]] = queue.Queue()
            opened = threading.Event()
            threading.Thread(target=follow, args=(sock, arrived, opened), daemon=True).start()
            if not opened.wait(20):
                raise SystemExit("bench: GET /changes did not open")
            samples = rounds(inbox, outbox, key, arrived, args.runs, args.budget)
        finally:
            daemon.terminate()
            daemon.wait()
    summarize(*samples)


def rounds(
    inbox: Path, outbox: Path, key: str, arrived: queue.Queue[tuple[float, dict]], runs: int, budget: float
) -> tuple[list[float], list[float], list[float]]:
    """(hook start to exit, hook start to arrival, hook exit to arrival) of each timed event."""
    hooks, follows, beyond = [], [], []
    stop = time.monotonic() + budget
    with open(inbox, "w") as events, open(outbox) as timings:
        for i in range(runs + 4):  # four warm-up events
            name = ("UserPromptSubmit", "Stop")[i % 2]
            events.write(name + "\n")
            events.flush()
            started, exited = map(float, timings.readline().split())
            try:
                while True:
                    at, change = arrived.get(timeout=20)
                    record = change.get("record") or {}
                    if change.get("session_key") == key and record.get("activity") == ACTIVITY[name]:
                        break
            except queue.Empty:
                raise SystemExit(f"bench: no {ACTIVITY[name]} change within 20 s of {name}") from None
            if i >= 4:
                hooks.append(exited - started)
                follows.append(at - started)
                beyond.append(at - exited)
            if time.monotonic() > stop and i >= 24:
                break
    return hooks, follows, beyond


def summarize(hooks: list[float], follows: list[float], beyond: list[float]) -> None:
    print(f"  {len(hooks)} events, alternating UserPromptSubmit / Stop")
    print(f"  {'':<30}  {'p50':>8}  {'p90':>8}  {'p99':>8}")
    for name, values in (
        ("hook start to /changes", follows),
        ("hook alone (start to exit)", hooks),
        ("hook exit to /changes", beyond),
    ):
        p50, high, p99 = statistics.median(values), p90(values), percentile(values, 0.99)
        print(f"  {name:<30}  {p50 * 1000:6.1f}ms  {high * 1000:6.1f}ms  {p99 * 1000:6.1f}ms")
    ratio = statistics.median(follows) / statistics.median(hooks)
    print(f"  hook start to /changes / hook alone (medians): {ratio:.2f}x")
    p99 = percentile(beyond, 0.99) * 1000
    verdict = "met" if p99 < AIM_MS else "NOT met"
    aim = f"p99 of the change's arrival beyond the hook's own run under {AIM_MS:g} ms"
    print(f"\naim: {aim}: {p99:.1f} ms, {verdict}")


if __name__ == "__main__":
    sys.exit(main())
