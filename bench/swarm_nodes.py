"""Benchmark the union roster between real daemons, each in its own network, PID and mount
namespace on a bridge (the tests' harness, ``tests/nodes.py``; needs root, and runs itself in
a network namespace of its own so nothing leaves the machine).

For 3 and 10 nodes (``--nodes``):

- ``claim to every other node``: a hook claim posted on the first node's socket until the
  change is on every other node's ``GET /swarm/changes`` (read as a client reads it, over its
  unix socket), p50 and p99 of the slowest node per claim;
- ``idle``: each daemon's CPU and RSS over ``--idle`` seconds, first in no swarm (the baseline,
  same run, same daemons), then joined and linked, and the difference per peer.

Run: ``sudo .venv/bin/python bench/swarm_nodes.py [--nodes 3 10] [--claims 60] [--idle 20]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import in_namespace
from tests.api.sse import Events
from tests.mesh.swarmnodes import SwarmNode, make
from tests.mesh.unionnodes import client, daemon_pid, process, snapshot
from tests.nodes import Network

SETTLE = 5.0
"""Seconds after the daemons start before the baseline is taken: a start's own work is done."""


def idle(nodes: list[SwarmNode], seconds: float) -> tuple[float, float]:
    """Mean CPU (share of a core) and RSS (MiB) of one daemon over ``seconds``."""
    procs = [psutil.Process(daemon_pid(node)) for node in nodes]
    before = [proc.cpu_times() for proc in procs]
    time.sleep(seconds)
    after = [proc.cpu_times() for proc in procs]
    cpu = [(b.user + b.system - a.user - a.system) / seconds for a, b in zip(before, after, strict=True)]
    return statistics.mean(cpu), statistics.mean(proc.memory_info().rss / 2**20 for proc in procs)


def claims(nodes: list[SwarmNode], runs: int) -> list[float]:
    """Seconds from each claim posted to its change on the slowest other node's stream."""
    body = process(nodes[0])
    streams = [Events(client(node), "/swarm/changes") for node in nodes[1:]]
    slowest = []
    try:
        for stream in streams:
            stream.__enter__()
        with client(nodes[0]) as claimer:
            key = claimer.post("/claim", json={**body, "activity": "working"}).json()["session_key"]
            for stream in streams:
                stream.until("session_started", key=key, timeout=30)
            for index in range(runs):
                began = time.monotonic()
                claimer.post(
                    "/claim", json={**body, "activity": ("idle", "working")[index % 2]}
                ).raise_for_status()
                slowest.append(max(stream.until("activity", key=key).at for stream in streams) - began)
    finally:
        for stream in streams:
            stream.__exit__()
    return slowest


def bench(count: int, runs: int, seconds: float) -> None:
    network = Network()
    try:
        with tempfile.TemporaryDirectory() as root:
            nodes = make(network, Path(root), count)
            time.sleep(SETTLE)
            cpu_alone, rss_alone = idle(nodes, seconds)
            for node in nodes[1:]:
                node.ok("join", nodes[0].address, "--token", nodes[0].ok("invite").strip())
            for node in nodes:
                node.wait_for(lambda node=node: len(snapshot(node)["nodes"]) == count, "linked", 60)
            times = sorted(claims(nodes, runs))
            p50, p99 = statistics.median(times), times[min(len(times) - 1, round(0.99 * (len(times) - 1)))]
            print(f"claim to every other node, {count:2d} nodes   p50 {p50 * 1000:6.1f} ms   ", end="")
            print(f"p99 {p99 * 1000:6.1f} ms   (n={len(times)})")
            cpu, rss = idle(nodes, seconds)
            cpu_peer, rss_peer = (cpu - cpu_alone) / (count - 1), (rss - rss_alone) / (count - 1)
            print(f"idle daemon, {count:2d} nodes          CPU {cpu * 100:.2f} % of a core ", end="")
            print(
                f"(no swarm {cpu_alone * 100:.2f} %), RSS {rss:.0f} MiB (no swarm {rss_alone:.0f}); ", end=""
            )
            print(f"per peer: {cpu_peer * 100:.3f} %, {rss_peer * 1024:.0f} KiB")
    finally:
        network.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[3, 10])
    parser.add_argument("--claims", type=int, default=60)
    parser.add_argument("--idle", type=float, default=20.0)
    options = parser.parse_args()
    for count in options.nodes:
        bench(count, options.claims, options.idle)


if __name__ == "__main__":
    in_namespace()
    main()
