"""Benchmark the swarm at scale: one real ``rosterd`` among N simulated peers (``simswarm``),
each on a loopback address of its own, in a network namespace of its own (needs root; nothing
leaves the machine).

For each N (``--peers``, default 10 100) with S sessions a peer (``--sessions``, 50):

- ``join``: each peer through the real invite and join, one after another: the join call,
  from its start until the real daemon's union has the peer's frame on a live stream, and
  (for up to fifty of the joins) until every member admitted before it has been told of it;
- ``linked``: every peer's stream live in the union;
- ``idle``: the real daemon's CPU and RSS over ``--idle`` seconds with every peer linked,
  nothing changing and the swarm at rest (two rounds after the last join: each side has said
  it holds the other's member set), against the same daemon before it was in any swarm (same
  run), per peer, and the hellos a second in that time;
- ``change``: changes at ``--rate`` a second across the peers, each from the moment a peer made
  it until it is on the real daemon's ``/swarm/changes`` (read over its unix socket), p50 and p99;
- ``list``: ``rosterd list --swarm --json`` and the table, and ``GET /swarm/snapshot``;
- ``catch-up``: a client away for ``--outage`` seconds while changes go on, then
  ``/swarm/changes?since=`` until it has caught up;
- ``silent``: one peer stops answering until the union marks it unreachable;
- ``web``: the web app in Chromium, logged in to the real daemon: from the page's load until
  every node's heading is drawn (its first paint of the union), how busy the page's main thread
  is while the changes go on, and the time to open a remote node and one of its sessions.

A simulated session is a headless one (``simswarm``): the page draws another node's headless
sessions from its records alone, where a terminal would need the peer to relay it.

Run: ``sudo .venv/bin/python bench/swarm_scale.py [--peers 10 100 1000] [--rate 20]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import queue
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import in_namespace
from simswarm import ROUND, Roll, SimPeer, spread
from tests.api.sse import Events
from tests.mesh.swarmnodes import SwarmNode

START = 60.0
WATCHED = 50
"""Joins whose spread to every member is timed, at most (each peer notes when it heard of each)."""
SPREAD_S = 120.0
"""Seconds a join may take to reach every member before the bench says which never heard."""
JOIN_ATTEMPTS = 3
"""Tries of a join whose connection failed, each with a new invite, as a person would; every
failed one is printed with the listener's refusals, so a retried join is never silent."""


@dataclass
class Loopback:
    """The bench's own network namespace as the one node a :class:`SwarmNode` runs on."""

    address: str = "127.0.0.1"
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def argv(self, *argv: str) -> list[str]:
        return list(argv)

    def start(self, *argv: str, **popen: Any) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(list(argv), **popen)
        self.procs.append(proc)
        return proc

    def end(self, proc: subprocess.Popen[bytes]) -> int:
        proc.terminate()
        try:
            return proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait(10)


def usage(pid: int, seconds: float) -> tuple[float, float]:
    """CPU (share of one core) and RSS (MiB) of ``pid`` over ``seconds``."""
    proc = psutil.Process(pid)
    before = proc.cpu_times()
    time.sleep(seconds)
    after = proc.cpu_times()
    return (after.user + after.system - before.user - before.system) / seconds, proc.memory_info().rss / 2**20


def quantiles(values: list[float]) -> str:
    if len(values) < 2:
        return f"n={len(values)}"
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    worst = max(values) * 1000
    return f"p50 {cuts[49] * 1000:.1f} ms, p99 {cuts[98] * 1000:.1f} ms, max {worst:.1f} ms (n={len(values)})"


def client(node: SwarmNode, timeout: float = 60) -> httpx.Client:
    return httpx.Client(
        transport=httpx.HTTPTransport(uds=str(node.socket)), base_url="http://rosterd", timeout=timeout
    )


def linked(node: SwarmNode) -> dict[str, str]:
    """Each peer's state in the union, by node name (a whole union: 40 MB at 50,000 rows)."""
    with client(node, timeout=300) as reader:
        rows = reader.get("/swarm/snapshot").json()["nodes"]
    return {row["node"]: row.get("peer_state") or "self" for row in rows}


def timed(argv: list[str], env: dict[str, str], runs: int = 3) -> tuple[float, int]:
    """The best of ``runs`` wall times of a command, and its output's size."""
    best, size = float("inf"), 0
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, env=env, timeout=120, check=True)
        best = min(best, time.perf_counter() - start)
        size = len(done.stdout)
    return best, size


async def admit(
    real: SwarmNode, peers: list[SimPeer], together: int
) -> tuple[list[float], list[float], list[float]]:
    """Every peer joins through the real daemon, ``together`` joins at a time; the join calls'
    times, and from each join's start until the real daemon's ``/swarm/changes`` says the peer
    is reachable (its first frame on a live stream is in the union). Followed on one stream
    rather than by reading the whole union after each join, which grows with every peer (40 MB
    at 50,000 rows) and kept the daemon busy with the bench's own reads.

    And for up to :data:`WATCHED` of the joins, evenly spread (every one at fewer peers), from
    its start until every member admitted before it has heard of it (the real daemon, its
    admitter, knows it once the join is answered; each peer hears it in a hello)."""
    loop = asyncio.get_running_loop()
    linked: dict[str, asyncio.Future[float]] = {peer.identity.node_id: loop.create_future() for peer in peers}
    done = False

    def follow() -> None:
        with Events(client(real, timeout=None), "/swarm/changes") as stream:  # type: ignore[arg-type]
            ready.set()
            while not done:
                try:
                    event = stream.next(0.5)
                except queue.Empty:
                    continue
                node = event.data.get("node_id") if isinstance(event.data, dict) else None
                if event.name == "node" and event.data.get("peer_state") == "reachable" and node in linked:
                    seen = linked[node]
                    loop.call_soon_threadsafe(lambda f=seen, at=event.at: f.done() or f.set_result(at))

    ready = threading.Event()
    reader = loop.run_in_executor(None, follow)
    await asyncio.to_thread(ready.wait, 60)
    calls, known, spread = [], [], []  # type: tuple[list[float], list[float], list[float]]
    gate = asyncio.Semaphore(together)
    began = time.monotonic()
    every = max(1, len(peers) // WATCHED)
    spreading: list[asyncio.Task[None]] = []

    async def heard_by_all(peer: SimPeer, start: float, before: list[SimPeer]) -> None:
        node_id = peer.identity.node_id
        while time.monotonic() - start < SPREAD_S:
            if all(node_id in member.learned for member in before):
                spread.append(max((m.learned[node_id] for m in before), default=start) - start)
                return
            await asyncio.sleep(0.05)
        missing = sum(node_id not in member.learned for member in before)
        print(f"{peer.name}: {missing} of {len(before)} members not told of it in {SPREAD_S:g} s", flush=True)

    async def one(peer: SimPeer) -> None:
        async with gate:
            peer.populate()
            watched = peer.index % every == 0
            if watched:
                peer.roll.watched.add(peer.identity.node_id)
            for attempt in range(1, JOIN_ATTEMPTS + 1):
                invited = await asyncio.to_thread(real.post, "/swarm/invite", {"ttl_minutes": 60})
                token = invited.json()["token"]
                start = time.monotonic()
                before = [other for other in peers if other is not peer and other.own_record is not None]
                try:
                    await peer.join(token)
                    break
                except (httpx.HTTPError, OSError, RuntimeError) as error:
                    refused = (await asyncio.to_thread(real.nodes)).get("connections", {}).get("refused")
                    print(
                        f"join {len(calls) + 1} failed ({type(error).__name__}: {error}), attempt {attempt}; "
                        f"the listener's refusals so far: {refused}",
                        flush=True,
                    )
                    if attempt == JOIN_ATTEMPTS:
                        raise
            calls.append(time.monotonic() - start)
            if watched:
                spreading.append(asyncio.create_task(heard_by_all(peer, start, before)))
            peer.run()
            known.append(await asyncio.wait_for(linked[peer.identity.node_id], 300) - start)
            if len(calls) % 100 == 0:
                rss = psutil.Process(real.proc.pid).memory_info().rss / 2**20  # type: ignore[union-attr]
                took = time.monotonic() - began
                print(f"  {len(calls)} admitted in {took:.0f} s, the daemon at {rss:.0f} MiB", flush=True)

    try:
        await asyncio.gather(*(one(peer) for peer in peers))
        await asyncio.gather(*spreading)
    finally:
        done = True
        await reader
    return calls, known, spread


async def settled(peers: list[SimPeer]) -> float:
    """Two rounds after every peer is linked: by then each peer and the daemon have greeted the
    other once since the last admission and said they hold the same member set, and a round
    skips every member but one unasked for its quiet time (five minutes at first, doubled by
    each greeting for time alone, up to an hour: ``rounds.QUIET_MIN``, ``QUIET_MAX``). The
    hellos a second in the idle window say how near to rest it was: a swarm whose members were
    admitted over the last half hour still greets some of them for time."""
    await asyncio.sleep(2 * ROUND)
    return 2 * ROUND


async def until_all(real: SwarmNode, peers: list[SimPeer], timeout: float) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        states = await asyncio.to_thread(linked, real)
        if all(states.get(peer.name) == "reachable" for peer in peers):
            return time.monotonic() - start
        await asyncio.sleep(0.5)
    raise AssertionError(f"not every peer linked in {timeout} s")


async def changes(real: SwarmNode, peers: list[SimPeer], rate: float, seconds: float) -> list[float]:
    """Each change's time from its peer to the real daemon's ``/swarm/changes``."""
    made: dict[tuple[str, int], float] = {}
    done = False
    with Events(client(real, timeout=None), "/swarm/changes") as stream:  # type: ignore[arg-type]
        task = spread(peers, rate, lambda: done)
        await asyncio.sleep(seconds)
        done = True
        await task
        await asyncio.sleep(2.0)
        for peer in peers:
            made.update(peer.emitted)
        latencies = []
        while True:
            try:
                event = await asyncio.to_thread(stream.next, 0.5)
            except (AssertionError, queue.Empty):
                break
            record = event.data.get("record") if isinstance(event.data, dict) else None
            if isinstance(record, dict):
                at = made.get((record["session_key"], record["revision"]))
                if at is not None:
                    latencies.append(event.at - at)
    for peer in peers:
        peer.emitted.clear()
    return latencies


async def catch_up(real: SwarmNode, peers: list[SimPeer], rate: float, outage: float) -> tuple[float, int]:
    """A client away ``outage`` seconds while changes go on: the time to read every change since."""
    with client(real) as reader:
        head = reader.get("/swarm/snapshot").json()
    cursor = f"{head['status_epoch']}:{head['seq']}"
    done = False
    task = spread(peers, rate, lambda: done)
    await asyncio.sleep(outage)
    done = True
    missed = await task

    def read() -> tuple[float, int]:
        start, count = time.perf_counter(), 0
        with client(real) as reader, reader.stream("GET", f"/swarm/changes?since={cursor}") as answer:
            for line in answer.iter_lines():
                if line.startswith("event:"):
                    count += 1
                    if count >= missed:
                        break
        return time.perf_counter() - start, count

    return await asyncio.to_thread(read)


async def silent(real: SwarmNode, peer: SimPeer) -> float:
    """Seconds from ``peer`` falling silent until the real daemon's stream says it is
    unreachable: followed on ``/swarm/changes?node=``, not by reading the whole union again
    (40 MB at 50,000 rows, which kept the daemon busy and delayed what it measured)."""
    return await asyncio.to_thread(_silent, real, peer, asyncio.get_running_loop())


def _silent(real: SwarmNode, peer: SimPeer, loop: asyncio.AbstractEventLoop) -> float:
    with Events(client(real), f"/swarm/changes?node={peer.identity.node_id}") as stream:
        stream.until("snapshot", timeout=60)
        start = time.monotonic()
        loop.call_soon_threadsafe(setattr, peer, "silent", True)
        while True:
            event = stream.until("node", timeout=300)
            if event.data.get("peer_state") == "unreachable":
                return time.monotonic() - start


async def scenario(real: SwarmNode, count: int, options: argparse.Namespace) -> None:
    assert real.proc is not None
    pid = real.proc.pid
    roll = Roll()
    peers = [SimPeer(index, options.sessions, roll) for index in range(count)]
    try:
        calls, known, spread = await admit(real, peers, options.together)
        print(f"join call ({options.together} at a time): {quantiles(calls)}")
        print(f"join until the union has the peer: {quantiles(known)}")
        print(f"join until every member knows it ({len(spread)} joins timed): {quantiles(spread)}")
        print(f"every peer linked again after the last join: {await until_all(real, peers, 120):.1f} s")
        print(f"at rest: {await settled(peers):.0f} s later, two rounds after the last join")
        sent, taken = sum(p.hellos_sent for p in peers), sum(p.hellos_taken for p in peers)
        cpu, rss = await asyncio.to_thread(usage, pid, options.idle)
        sent = sum(p.hellos_sent for p in peers) - sent
        taken = sum(p.hellos_taken for p in peers) - taken
        base_cpu, base_rss = options.baseline
        print(
            f"idle: {cpu * 100:.2f} % of a core, {rss:.0f} MiB "
            f"(no swarm: {base_cpu * 100:.2f} %, {base_rss:.0f} MiB); per peer "
            f"{(cpu - base_cpu) / count * 100:.4f} %, {(rss - base_rss) / count * 1024:.0f} KiB; "
            f"hellos a second: {sent / options.idle:.2f} from the peers, "
            f"{taken / options.idle:.2f} from the daemon"
        )
        latencies = await changes(real, peers, options.rate, options.seconds)
        print(f"change on a peer to the real /swarm/changes at {options.rate:g}/s: {quantiles(latencies)}")
        env = real.env
        rosterd = str(Path(sys.executable).parent / "rosterd")
        for label, argv in (
            ("rosterd list --swarm --json", [rosterd, "list", "--swarm", "--json"]),
            ("rosterd list --swarm", [rosterd, "list", "--swarm"]),
        ):
            took, size = await asyncio.to_thread(timed, argv, env)
            print(f"{label}: {took * 1000:.0f} ms ({size / 1024:.0f} KiB)")
        with client(real) as reader:
            start = time.perf_counter()
            size = len(reader.get("/swarm/snapshot").content)
            print(
                f"GET /swarm/snapshot: {(time.perf_counter() - start) * 1000:.0f} ms ({size / 1024:.0f} KiB)"
            )
        took, read = await catch_up(real, peers, options.rate, options.outage)
        print(f"catch-up after {options.outage:g} s away: {read} changes in {took * 1000:.0f} ms")
        options.loop = asyncio.get_running_loop()
        await asyncio.to_thread(web, real, peers, options)
        print(f"a silent peer until unreachable: {await silent(real, peers[0]):.1f} s")
    finally:
        for peer in peers:
            await peer.close()


BUSY = """async (seconds) => {
  let busy = 0;
  const watch = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) busy += entry.duration;
  });
  watch.observe({ type: "longtask" });
  await new Promise((done) => setTimeout(done, seconds * 1000));
  watch.disconnect();
  return busy;
}"""
"""Milliseconds of the page's main thread spent in tasks over 50 ms, while ``seconds`` pass."""


PARTS = """async () => {
  const { Roster } = await import("/static/roster.js");
  const at = [performance.now()];
  const text = await (await fetch("/swarm/snapshot", { cache: "no-store" })).text();
  at.push(performance.now());
  const union = JSON.parse(text);
  at.push(performance.now());
  const roster = new Roster();
  roster.setUnion(union);
  at.push(performance.now());
  roster.rows();
  at.push(performance.now());
  return { read: at[1] - at[0], parsed: at[2] - at[1], taken: at[3] - at[2], made: at[4] - at[3] };
}"""
"""Where a first paint's time goes: the union read and parsed, taken into a roster, its rows made."""


def web(real: SwarmNode, peers: list[SimPeer], options: argparse.Namespace) -> None:
    """The union in Chromium: first paint, the main thread under changes, opening a remote session."""
    from playwright.sync_api import sync_playwright
    from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS

    link = real.post("/login-link").json()["url"]
    headings = len(peers) + 1
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(viewport={"width": 1200, "height": 800}).new_page()
            start = time.perf_counter()
            page.goto(link)
            drawn = "n => document.querySelectorAll('#sessions .node-group').length === n"
            page.wait_for_function(drawn, arg=headings, timeout=120_000)
            painted = time.perf_counter() - start
            rows = page.evaluate("document.querySelectorAll('#sessions li.session').length")
            print(f"web: first paint of the union ({headings} nodes, {rows} rows): {painted * 1000:.0f} ms")
            parts = page.evaluate(PARTS)
            print(
                "web: its parts, again in the page: the union read {read:.0f} ms, parsed {parsed:.0f} ms,"
                " taken in {taken:.0f} ms, rows made {made:.0f} ms".format(**parts)
            )
            stop = False
            changing = asyncio.run_coroutine_threadsafe(
                _changing(peers, options.rate, lambda: stop), options.loop
            )
            seconds = 10.0
            busy = page.evaluate(BUSY, seconds)
            stop = True
            changing.result(30)
            print(
                f"web: main thread in long tasks under {options.rate:g} changes/s: "
                f"{busy / seconds / 10:.1f} % of the time"
            )
            node = peers[-1].identity.node_id
            group = f'#sessions .node-group[data-node-id="{node}"]'
            start = time.perf_counter()
            page.click(f"{group} .node-head")
            first = page.wait_for_selector(f"{group} li.session[data-session]")
            opened = time.perf_counter() - start
            key = first.get_attribute("data-session")
            shown_after = to_page(page, peers[-1], key, options.loop)
            print(f"web: a change on a peer until the page's row shows it: {quantiles(shown_after)}")
            start = time.perf_counter()
            page.click(f'{group} li.session[data-session="{key}"]')  # drawn again since
            page.wait_for_selector(f'.headless[data-session="{key}"]', state="visible")
            shown = time.perf_counter() - start
            print(f"web: open a remote node {opened * 1000:.0f} ms, a session of it {shown * 1000:.0f} ms")
        finally:
            browser.close()


def to_page(page: Any, peer: SimPeer, key: str, loop: asyncio.AbstractEventLoop) -> list[float]:
    """Seconds from a change of session ``key`` on ``peer`` (working, then done, in turn) until
    its row on the page says it: 20 changes."""
    row = f'#sessions li.session[data-session="{key}"]'
    took = []
    for _ in range(20):
        working = page.get_attribute(row, "data-state") != "working"
        start = time.perf_counter()
        loop.call_soon_threadsafe(peer.change, key)
        page.wait_for_function(
            "([row, working]) => (document.querySelector(row)?.dataset.state === 'working') === working",
            arg=[row, working],
            timeout=30_000,
        )
        took.append(time.perf_counter() - start)
    return took


async def _changing(peers: list[SimPeer], rate: float, stop: Any) -> int:
    return await spread(peers, rate, stop)


def bench(count: int, options: argparse.Namespace) -> None:
    print(f"\n== {count} simulated peers x {options.sessions} sessions, one real daemon ==")
    with tempfile.TemporaryDirectory(prefix="roost-scale-") as tmp:
        home = Path(tmp) / "real"
        for directory in ("home", "config", "state", "run", "bin"):
            (home / directory).mkdir(parents=True, mode=0o700)
        real = SwarmNode(Loopback(), home, "real")  # type: ignore[arg-type]
        real.start()
        try:
            time.sleep(3.0)
            assert real.proc is not None
            options.baseline = usage(real.proc.pid, options.idle)
            asyncio.run(scenario(real, count, options))
        finally:
            real.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--rate", type=float, default=20.0, help="changes a second, across all peers")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long changes are measured")
    parser.add_argument("--idle", type=float, default=20.0)
    parser.add_argument("--outage", type=float, default=60.0)
    parser.add_argument("--together", type=int, default=1, help="joins in flight at once")
    options = parser.parse_args()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    memory = psutil.virtual_memory().total / 2**30
    print(f"machine: {os.cpu_count()} cores, {memory:.0f} GiB; python {sys.version.split()[0]}")
    for count in options.peers:
        bench(count, options)


if __name__ == "__main__":
    in_namespace()
    main()
