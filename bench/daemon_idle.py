"""Benchmark the daemon at rest: what ``rosterd`` costs with 100 idle agents, and how long a
restart takes to know them all again.

A throwaway tmux server holds 100 panes running ``sleep``, each badged ``done`` with the
options an agent's hooks leave behind (an idle agent, as far as the daemon can tell). The
daemon is started with its default config (a scan every 2 s) and left alone for ``--idle``
seconds: its CPU time over that window, its live children's included (its tmux control-mode
clients), as a percentage of one core, and its resident memory at the end. Baseline, over the
same window: the tmux server's own CPU time. Aim: under 1% of a core.

Then ``--restarts`` times: ``kill -9`` and start again, timing spawn to the first
``GET /snapshot`` that holds all 100 sessions, with the rebuild time the daemon reports.

Run: ``.venv/bin/python bench/daemon_idle.py [--idle SECONDS] [--restarts N]``
"""

from __future__ import annotations

import argparse
import signal
import statistics
import subprocess
import time
from pathlib import Path

import httpx
import psutil
from common import PYTHON, ROOT, Sandbox, free_port, p90

PANES = 100
AIM_PERCENT = 1.0
SESSION = "bench-idle-{}"


def ours(sock: Path, tmux: str) -> int | None:
    """How many live sessions of our tmux server the daemon's snapshot holds; None until it answers."""
    try:
        with httpx.Client(transport=httpx.HTTPTransport(uds=str(sock)), base_url="http://rosterd") as http:
            records = http.get("/snapshot", timeout=5).json()["records"]
    except httpx.TransportError:
        return None
    return sum(1 for r in records if (r.get("tmux") or {}).get("socket") == tmux and r["liveness"] != "ended")


def start(box: Sandbox, sock: Path) -> tuple[subprocess.Popen[bytes], float, float]:
    """A daemon; seconds from spawn to a snapshot with every pane, and its reported rebuild ms."""
    spawned = time.monotonic()
    proc = subprocess.Popen([str(PYTHON), "-m", "roost.daemon"], env=box.env, stderr=subprocess.DEVNULL)
    deadline = spawned + 60
    while (ours(sock, box.socket) or 0) < PANES:
        if time.monotonic() > deadline or proc.poll() is not None:
            raise SystemExit(f"bench: the daemon did not list {PANES} sessions within 60 s")
        time.sleep(0.01)
    whole = time.monotonic() - spawned
    with httpx.Client(transport=httpx.HTTPTransport(uds=str(sock)), base_url="http://rosterd") as http:
        rebuild = http.get("/status", timeout=5).json()["rebuild"]["ms"]
    return proc, whole, rebuild


def cpu(process: psutil.Process, children: bool) -> float:
    """CPU seconds so far of ``process`` and, with ``children``, of its live descendants."""
    total = sum(process.cpu_times()[:2])
    for child in process.children(recursive=True) if children else ():
        try:
            total += sum(child.cpu_times()[:2])
        except psutil.NoSuchProcess:
            continue
    return total


def rss(process: psutil.Process) -> tuple[int, int]:
    """Resident bytes of the process and of its live descendants."""
    own = process.memory_info().rss
    kids = 0
    for child in process.children(recursive=True):
        try:
            kids += child.memory_info().rss
        except psutil.NoSuchProcess:
            continue
    return own, kids


def idle(proc: subprocess.Popen[bytes], tmux_pid: int, seconds: float) -> None:
    daemon, server = psutil.Process(proc.pid), psutil.Process(tmux_pid)
    time.sleep(2)  # past the start-up: the first scan passes and the control clients attaching
    before, server_before, began = cpu(daemon, True), cpu(server, False), time.monotonic()
    time.sleep(seconds)
    used, server_used = cpu(daemon, True) - before, cpu(server, False) - server_before
    wall = time.monotonic() - began
    own, kids = rss(daemon)
    percent, server_percent = 100 * used / wall, 100 * server_used / wall
    print(f"  idle over {wall:.0f} s with {PANES} idle agents (scan every 2 s, the default):")
    print(f"    rosterd (children included)  {percent:5.2f}% of one core  ({used:.2f} CPU s)")
    print(f"    tmux server (baseline)       {server_percent:5.2f}% of one core  ({server_used:.2f} CPU s)")
    ratio = f"{percent / server_percent:.1f}x" if server_used > 0 else "n/a (the server used no CPU)"
    print(f"    rosterd / tmux server: {ratio}")
    children = len(daemon.children(recursive=True))
    print(f"    RSS: rosterd {own / 2**20:.1f} MiB, its {children} children {kids / 2**20:.1f} MiB")
    verdict = "met" if percent < AIM_PERCENT else "NOT met"
    print(f"\naim: idle rosterd under {AIM_PERCENT:g}% of one core: {percent:.2f}%, {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=float, default=60, help="seconds of idle CPU sampling")
    parser.add_argument("--restarts", type=int, default=10)
    args = parser.parse_args()

    print(f"rosterd at rest ({PANES} idle agents)")
    with Sandbox() as box:
        config = box.root / "config" / "roost"
        config.mkdir(parents=True)
        (config / "rosterd.toml").write_text(f"[node]\nloopback_port = {free_port()}\nhook_port = 0\n")
        panes = [box.start("sleep 100000"), *box.windows(PANES - 1)]
        for n, pane in enumerate(panes):
            box.set_options(
                pane,
                {
                    "@roost-state": "done",
                    "@roost-since": "1700000000",
                    "@roost-session-id": SESSION.format(n),
                    "@roost-harness": "claude",
                    "@roost-cwd": str(ROOT),
                    "@roost-turn": "1",
                    "@roost-turn-done": "1",
                },
            )
        tmux_pid = int(box.tmux("display-message", "-p", "#{pid}").strip())
        sock = box.root / "run" / "roost" / "rosterd.sock"

        proc, _, _ = start(box, sock)
        try:
            idle(proc, tmux_pid, args.idle)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()

        wholes, rebuilds = [], []
        for _ in range(args.restarts):
            proc, whole, rebuild = start(box, sock)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            wholes.append(whole)
            rebuilds.append(rebuild / 1000)
    print(f"\n  restart after kill -9, {len(wholes)} times:")
    for name, values in (("spawn to a snapshot with all 100", wholes), ("rebuild (from /status)", rebuilds)):
        median, high = statistics.median(values) * 1000, p90(values) * 1000
        print(f"    {name:<34} median {median:7.1f} ms  p90 {high:7.1f} ms")


if __name__ == "__main__":
    main()
