"""Benchmark what the web app's swarm routes cost against their one-node counterparts, between
two real daemons in namespaces of their own (the tests' harness, ``tests/nodes.py``; needs root,
and runs itself in a network namespace of its own so nothing leaves the machine):

- ``keystroke echo``: a key sent to a fake agent's pane on n1 until its echo comes back, over
  n1's own ``/ws/terminal/{key}`` and over n2's relay ``/ws/swarm/n1/terminal/{key}``, in
  alternating rounds of the same run;
- ``ledger``: n2's ``GET /swarm/journal`` and ``GET /swarm/usage`` (n2's ledger and n1's,
  asked over the swarm) against n2's own ``GET /journal`` and ``GET /usage``.

Run: ``sudo .venv/bin/python bench/swarm_terminal.py [--keys 100] [--reads 40] [--rounds 3]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.mesh.swarmnodes import SwarmNode
from tests.mesh.unionnodes import launched, snapshot, swarm
from tests.nodes import Network
from websockets.asyncio.client import ClientConnection, unix_connect

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))] * 1000


async def _until(socket: ClientConnection, wanted: bytes) -> None:
    seen = b""
    async with asyncio.timeout(15):
        while wanted not in seen:
            message = await socket.recv()
            if isinstance(message, bytes):
                seen += message


async def _echoes(node: SwarmNode, path: str, keys: int) -> list[float]:
    """Seconds from each key sent to its echo, after ten to warm up."""
    taken = []
    async with unix_connect(str(node.socket), f"ws://rosterd{path}", proxy=None, max_size=None) as socket:
        await _until(socket, b"fake agent ready")
        for index in range(keys + 10):
            letter = LETTERS[index % len(LETTERS)]
            began = time.perf_counter()
            await socket.send(json.dumps({"type": "input", "data": letter}))
            await _until(socket, letter.encode())
            taken.append(time.perf_counter() - began)
        await socket.send(json.dumps({"type": "input", "data": "\x15"}))  # the line is emptied
    return taken[10:]


def _reads(node: SwarmNode, route: str, count: int) -> list[float]:
    taken = []
    for _ in range(count):
        began = time.perf_counter()
        node.get(route)
        taken.append(time.perf_counter() - began)
    return taken


def line(name: str, base: list[float], swarm_side: list[float]) -> str:
    p50, p50s = percentile(base, 0.5), percentile(swarm_side, 0.5)
    return (
        f"{name:<22} {p50:7.1f} / {percentile(base, 0.99):7.1f} ms   "
        f"{p50s:7.1f} / {percentile(swarm_side, 0.99):7.1f} ms   {p50s / p50:5.2f}x, {p50s - p50:+.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=100)
    parser.add_argument("--reads", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if os.environ.get("ROOST_BENCH_NETNS") != "1":
        argv = [sys.executable, *sys.argv]
        shell = 'ip link set lo up && exec "$@"'
        done = subprocess.run(
            ["unshare", "--net", "sh", "-c", shell, "sh", *argv], env={**os.environ, "ROOST_BENCH_NETNS": "1"}
        )
        sys.exit(done.returncode)
    network = Network()
    with tempfile.TemporaryDirectory(prefix="rb", dir="/tmp") as short:
        root = Path(short)
        nodes: list[SwarmNode] = []
        try:
            nodes = swarm(network, root, 2)
            a, b = nodes
            key = launched(a, root, root / "keys.log")["session_key"]
            b.wait_for(lambda: any(r["session_key"] == key for r in snapshot(b)["records"]), "n2 holds it")
            paths = {
                "own": f"/ws/terminal/{quote(key, safe='')}",
                "relay": f"/ws/swarm/n1/terminal/{quote(key, safe='')}",
            }
            routes = ("/journal", "/swarm/journal", "/usage", "/swarm/usage")
            taken: dict[str, list[float]] = {name: [] for name in (*paths, *routes)}
            for _ in range(args.rounds):
                taken["own"] += asyncio.run(_echoes(a, paths["own"], args.keys))
                taken["relay"] += asyncio.run(_echoes(b, paths["relay"], args.keys))
                for route in routes:
                    taken[route] += _reads(b, route, args.reads)
            print(f"{'case':<22} {'one node p50 / p99':>22}   {'swarm p50 / p99':>20}   ratio (p50)")
            print(line("keystroke echo", taken["own"], taken["relay"]))
            print(line("journal", taken["/journal"], taken["/swarm/journal"]))
            print(line("usage", taken["/usage"], taken["/swarm/usage"]))
        finally:
            for node in nodes:
                node.stop()
            network.close()


if __name__ == "__main__":
    main()
