"""Benchmark ``rosterd daemon``: how fast it rebuilds its roster, and what it costs when idle.

A server of 50 badged panes (the options an agent's hooks leave behind) is built once. The
daemon is then started and killed with SIGKILL again and again; each start reports how long
its rebuild took (one ``list-panes -a`` plus one process scan) in ``/status``, set beside a
bare ``tmux list-panes -a`` timed in the same rounds. Last, one daemon is left idle with the
default 2 s scan interval and its CPU time (its tmux children included) is read.

Run: ``.venv/bin/python bench/rosterd.py [--runs N] [--idle SECONDS]``
"""

from __future__ import annotations

import argparse
import signal
import socket
import statistics
import subprocess
import time
from pathlib import Path

import httpx
import psutil
from common import PYTHON, TMUX, Sandbox, p90, wait_for

PANES = 50
STATES = ("working", "blocked", "done", "idle", "error")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--idle", type=float, default=60, help="seconds of idle CPU sampling")
    args = parser.parse_args()

    print(f"rosterd daemon ({PANES} badged panes)")
    with Sandbox() as box:
        config = box.root / "config" / "roost"
        config.mkdir(parents=True)
        (config / "rosterd.toml").write_text(f"[node]\nloopback_port = {free_port()}\n")
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
