"""Benchmark the tmux watcher (``roost.pane.tmux.watch``): its CPU cost idle and under a spewing pane.

Idle: 20 panes doing nothing for ``--idle`` seconds, once as 20 sessions (20 control clients)
and once as one session of 20 windows (one client). The watcher must cost next to nothing.

Spew: one pane writes 5 MB (``yes | head -c 5000000``) while the watcher holds 20 sessions,
interleaved with the same spew unwatched (the baseline: what tmux spends on that output
anyway). Reported: CPU of this process (parser + coalescing), of the ``tmux -C`` clients,
and of the tmux server, wall time, output events for the pane, and the longest event-loop lag.

Run: ``.venv/bin/python bench/watch.py [--idle SECONDS] [--rounds N]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from dataclasses import dataclass

from common import TMUX, Sandbox

from roost.pane.tmux.server import Server
from roost.pane.tmux.watch import Change, Watcher

PANES = 20
SPEW_BYTES = 5_000_000


def cpu(pid: int) -> float:
    """User + system CPU seconds of a live process."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Spew:
    wall: float
    own: float
    clients: float
    server: float
    events: int = 0
    lag: float = 0.0


class Bench:
    def __init__(self, box: Sandbox) -> None:
        self.box = box
        self.server = Server(box.socket)
        self.round = 0

    def server_pid(self) -> int:
        return int(self.box.tmux("display-message", "-p", "#{pid}").strip())

    async def spew(self) -> tuple[str, float]:
        """A new window writing SPEW_BYTES; its pane and the wall seconds until it is done.

        A new pane each time: ``respawn-pane -k`` on a pane whose output a control client has
        not consumed yet crashes the tmux 3.3a server.
        """
        self.round += 1
        channel = f"spew-{self.round}"
        command = f"yes | head -c {SPEW_BYTES}; tmux wait-for -S {channel}; exec sleep 100000"
        start = time.monotonic()
        pane = self.box.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "main:", command).strip()
        waiter = await asyncio.create_subprocess_exec(TMUX, "-S", self.box.socket, "wait-for", channel)
        await waiter.wait()
        wall = time.monotonic() - start
        return pane, wall

    async def unwatched(self) -> Spew:
        own, server = time.process_time(), cpu(self.server_pid())
        pane, wall = await self.spew()
        result = Spew(wall, time.process_time() - own, 0.0, cpu(self.server_pid()) - server)
        self.box.tmux("kill-pane", "-t", pane)
        return result

    async def watched(self) -> Spew:
        events: list[Change] = []
        async with Watcher(self.server, events.append) as watcher:
            pids = [client.pid for client in watcher.clients.values() if client.pid]
            lags: list[float] = []
            stop = asyncio.Event()

            async def heartbeat() -> None:
                while not stop.is_set():
                    before = time.monotonic()
                    await asyncio.sleep(0.01)
                    lags.append(time.monotonic() - before - 0.01)

            beat = asyncio.create_task(heartbeat())
            own, clients, server = time.process_time(), sum(map(cpu, pids)), cpu(self.server_pid())
            pane, wall = await self.spew()
            await asyncio.sleep(0.2)
            result = Spew(
                wall,
                time.process_time() - own,
                sum(map(cpu, pids)) - clients,
                cpu(self.server_pid()) - server,
                len([c for c in events if c.kind == "output" and c.pane == pane]),
            )
            stop.set()
            await beat
            result.lag = max(lags)
            self.box.tmux("kill-pane", "-t", pane)
            return result

    async def idle(self, seconds: float) -> tuple[float, float]:
        """CPU seconds (this process, control clients) while every pane sits idle."""
        async with Watcher(self.server, lambda change: None) as watcher:
            assert len(watcher.panes()) == PANES, watcher.panes()
            await asyncio.sleep(0.5)
            pids = [client.pid for client in watcher.clients.values() if client.pid]
            own, clients = time.process_time(), sum(map(cpu, pids))
            await asyncio.sleep(seconds)
            return time.process_time() - own, sum(map(cpu, pids)) - clients


async def run(idle_seconds: float, rounds: int) -> None:
    with Sandbox() as box:
        box.start("sleep 100000")
        for n in range(1, PANES):
            box.tmux("new-session", "-d", "-s", f"s{n}", "sleep 100000")
        bench = Bench(box)
        own, clients = await bench.idle(idle_seconds)
        print(f"  idle, {PANES} sessions x 1 pane, {idle_seconds:.0f}s:")
        print(f"    watcher {own * 1000:.0f} ms CPU, {PANES} tmux -C clients {clients * 1000:.0f} ms CPU")

        plain: list[Spew] = []
        watched: list[Spew] = []
        for _ in range(rounds):
            plain.append(await bench.unwatched())
            watched.append(await bench.watched())
        print(f"  spew {SPEW_BYTES / 1e6:.0f} MB in one pane, {PANES} sessions watched (median of {rounds}):")
        for label, runs in (("unwatched", plain), ("watched", watched)):
            med = {key: statistics.median(getattr(r, key) for r in runs) for key in Spew.__dataclass_fields__}
            line = (
                f"    {label:<9} wall {med['wall']:.2f}s  watcher CPU {med['own']:.2f}s  "
                f"tmux -C CPU {med['clients']:.2f}s  tmux server CPU {med['server']:.2f}s"
            )
            if runs is watched:
                line += f"  output events {med['events']:.0f}  max loop lag {med['lag'] * 1000:.0f} ms"
            print(line)

    with Sandbox() as box:
        box.start("sleep 100000")
        box.windows(PANES - 1)
        own, clients = await Bench(box).idle(idle_seconds)
        print(f"  idle, 1 session x {PANES} windows, {idle_seconds:.0f}s:")
        print(f"    watcher {own * 1000:.0f} ms CPU, 1 tmux -C client {clients * 1000:.0f} ms CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=float, default=10, help="seconds of idle measurement")
    parser.add_argument("--rounds", type=int, default=3, help="spew rounds, each watched and not")
    args = parser.parse_args()
    print("tmux watcher (control mode)")
    asyncio.run(run(args.idle, args.rounds))


if __name__ == "__main__":
    main()
