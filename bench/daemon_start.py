"""Benchmark ``rosterd`` from spawn to serving its rebuilt roster, with 20 live sessions.

The sandbox holds 10 tmux panes badged as a hook leaves them and 10 live headless sessions
(holders over the fake ACP adapter, ``tests/fakes/acp_adapter.py``). Each round kills the
daemon with SIGKILL, spawns it again and polls its unix socket every millisecond until
``GET /snapshot`` answers 200 with all 20 sessions in it: that moment is "serving the rebuilt
roster". The same round also times a bare ``python -c pass`` (the floor of any Python
daemon) and notes when ``GET /status`` first answered (the whole daemon ready: API, MCP,
swarm). Rounds are interleaved, so the ratios hold on a busy machine; the aim is under
0.25 s to serving.

Run: ``.venv/bin/python bench/daemon_start.py [--runs N] [--src DIR]``; ``--src`` runs roost from
another source tree (``PYTHONPATH``), to measure a tree before a change.
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import PYTHON, ROOT, Sandbox, end_holders, free_port, python_start, show

ADAPTER = ROOT / "tests" / "fakes" / "acp_adapter.py"
PANES = 10
HEADLESS = 10
AIM = 0.25


def ask(sock: Path, method: str, path: str, body: bytes = b"") -> tuple[int, bytes] | None:
    """One HTTP/1.1 request over the unix socket, without a client library's start-up cost."""
    try:
        with socket.socket(socket.AF_UNIX) as conn:
            conn.settimeout(30)
            conn.connect(str(sock))
            head = f"{method} {path} HTTP/1.1\r\nHost: rosterd\r\nConnection: close\r\n"
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            conn.sendall(head.encode() + body)
            data = b""
            while chunk := conn.recv(65536):
                data += chunk
    except OSError:
        return None
    status_line, _, rest = data.partition(b"\r\n")
    if not status_line:
        return None
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


def sessions(body: bytes) -> int:
    return sum(1 for record in json.loads(body)["records"] if record.get("liveness") != "ended")


def post(sock: Path, path: str, doc: dict) -> dict:
    answer = ask(sock, "POST", path, json.dumps(doc).encode())
    if answer is None or answer[0] >= 300:
        sys.exit(f"bench: POST {path}: {answer}")
    return json.loads(answer[1])


def spawn(box: Sandbox, sock: Path, want: int) -> tuple[subprocess.Popen[bytes], float, float]:
    """A daemon, seconds from spawn to ``/snapshot`` with ``want`` sessions, and to ``/status``."""
    spawned = time.monotonic()
    proc = subprocess.Popen([str(PYTHON), "-m", "roost.daemon"], env=box.env, stderr=subprocess.DEVNULL)
    while True:
        answer = ask(sock, "GET", "/snapshot") if sock.exists() else None
        if answer is not None and answer[0] == 200 and sessions(answer[1]) >= want:
            served = time.monotonic() - spawned
            break
        if proc.poll() is not None or time.monotonic() - spawned > 30:
            sys.exit("bench: rosterd did not serve its roster")
        time.sleep(0.001)
    while (answer := ask(sock, "GET", "/status")) is None or answer[0] != 200:
        time.sleep(0.001)
    return proc, served, time.monotonic() - spawned


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--src", help="run roost from this source tree (PYTHONPATH)")
    args = parser.parse_args()
    want = PANES + HEADLESS
    print(f"rosterd spawn to serving its roster ({PANES} panes + {HEADLESS} headless, {args.runs} rounds)")
    with Sandbox() as box:
        if args.src:
            box.env["PYTHONPATH"] = str(Path(args.src).resolve())
            print(f"  roost from {args.src}")
        config = box.root / "config" / "roost"
        config.mkdir(parents=True)
        (config / "rosterd.toml").write_text(
            f"[node]\nloopback_port = {free_port()}\nhook_port = 0\n"
            f'[harness.fake]\nadapter = "{PYTHON} {ADAPTER}"\n'
        )
        (box.root / "fake-acp").mkdir()
        box.env["FAKE_ACP_STATE"] = str(box.root / "fake-acp")
        sock = box.root / "run" / "roost" / "rosterd.sock"
        panes = [box.start("sleep 100000"), *box.windows(PANES - 1)]
        for pane in panes:
            box.set_options(pane, {"@roost-state": "working", "@roost-since": "1700000000"})
        proc, _, _ = spawn(box, sock, PANES)
        try:
            for _ in range(HEADLESS):
                post(sock, "/sessions", {"harness": "fake", "cwd": str(box.root)})
            served, ready, floor = [], [], []
            for n in range(args.runs + 2):  # two warm-up rounds
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                bare = python_start()
                proc, first, whole = spawn(box, sock, want)
                if n >= 2:
                    served.append(first)
                    ready.append(whole)
                    floor.append(bare)
            show("spawn to serving the roster", served, floor)
            show("spawn to /status (all ready)", ready, floor)
            show("python -c pass", floor, floor)
            median = statistics.median(served)
            verdict = "met" if median < AIM else "not met"
            aim = f"serving within {AIM * 1000:.0f} ms with {want} sessions"
            print(f"  aim: {aim}: {verdict} ({median * 1000:.0f} ms)")
        finally:
            proc.terminate()
            proc.wait()
            end_holders(box)


if __name__ == "__main__":
    main()
