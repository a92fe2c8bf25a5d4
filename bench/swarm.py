"""Benchmark the swarm's transport: signed requests over pinned TLS, joining, and a revocation
reaching every member.

Every node here is a real :class:`roost.remote.mesh.node.Mesh` (listener, dialer, rounds, swarm.json
in a temp dir) on its own 127.0.0.x address, all in this one process and one event loop, so
the numbers are the transport's cost with no network under it: what a tailnet adds is its
own round trip. Cases:

- ``hello, open connection``: one signed ``POST /swarm/hello`` and its answer, both hellos
  verified and merged, on a kept-alive connection (what a round costs per peer);
- ``hello, new connection``: the same with a fresh TLS 1.3 handshake, both sides pinned;
- ``sign + verify``: the signature and its check alone, no HTTP;
- ``join``: from ``invite`` to the joiner's ``join`` returning (the admitter greets every
  member first), with 1 and 9 members already in;
- ``revoke``: from ``revoke`` to its return, when every other member has been told, with 3
  and 10 nodes;
- ``claim to every union``: a hook claim applied on one node until the change is in every
  other node's swarm feed (what ``/swarm/changes`` sends), with 3 and 10 nodes, beside the
  same change reaching the claiming node's own feed (the baseline: no network, no peer);
- ``idle, per peer``: CPU and memory a node spends per peer on keep-alives, streams and
  rounds, against the same nodes idle in no swarm;
- ``union of 100 x 50``: ``/swarm/snapshot``'s document (built and JSON-encoded) with 100
  simulated peers of 50 sessions each, against this node's own ``/snapshot`` of 50; and what
  a frame and a change weigh on the wire, which is why the stream sends a frame once and
  changes after.
- ``prompt``: two real daemons (node ``a`` on 127.0.0.2, ``b`` on 127.0.0.3) and a headless
  session on ``a`` over the fake ACP adapter; one prompt waited for idle, sent to ``a`` itself
  and, in the same rounds, to ``b``, which forwards it to ``a`` (``POST /swarm/act``: a new
  pinned TLS connection, the act run through ``a``'s own route). The ratio is the proxied
  prompt's cost against the same prompt made locally.

Run: ``.venv/bin/python bench/swarm.py [--runs N] [--only hello,prompt]`` (``--only`` names the
cases to run: ``hello``, ``join``, ``revoke``, ``claim``, ``idle``, ``union``, ``prompt``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

import psutil
from common import PYTHON, ROOT, Sandbox
from headless import Daemon, end_holders, free_port

from roost.remote.mesh import listener
from roost.remote.mesh.node import Mesh
from roost.remote.mesh.place import Place
from roost.remote.swarm import canonical, signing
from roost.remote.swarm.feed import Feed, Subscription
from roost.remote.swarm.identity import Identity
from roost.remote.swarm.peers import Peers
from roost.truth.roster import Claim, ProcessId, Roster, records
from roost.truth.roster.live import Live

PORT = 18791


def ms(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered) * 1000:7.2f} ms   p99 {p99 * 1000:7.2f} ms   (n={len(ordered)})"


class Swarm:
    """``count`` meshes on 127.0.0.2, .3, …, started, none yet in a swarm."""

    def __init__(self, root: Path, count: int, first: int = 2) -> None:
        self.nodes = []
        for index in range(count):
            name = f"n{first + index}"
            directory = root / name
            directory.mkdir(mode=0o700)
            self.nodes.append(
                Mesh(
                    directory,
                    Identity.generate(name),
                    name=name,
                    place=Place(f"127.0.0.{first + index}", PORT, "bench"),
                    static_peers=(),
                    use_tailscale=False,
                    version="bench",
                    clock=time.time,
                    live=Live(Roster(name, name, time.time), time.time),
                    peers=Peers(name),
                )
            )

    async def start(self) -> None:
        for node in self.nodes:
            await node.start()

    async def stop(self) -> None:
        for node in self.nodes:
            await node.stop()

    async def form(self) -> None:
        """Every node joins the first."""
        admitter = self.nodes[0]
        for node in self.nodes[1:]:
            await node.join(admitter.listening or "", admitter.invite(60).token)


async def hellos(runs: int) -> None:
    with tempfile.TemporaryDirectory() as root:
        swarm = Swarm(Path(root), 2)
        await swarm.start()
        await swarm.form()
        a, b = swarm.nodes
        a_id = a.membership.identity.node_id
        member = b.membership.members[a_id]
        kept: list[float] = []
        for _ in range(runs):
            began = time.perf_counter()
            answer = await b.dialer.send(member, "POST", listener.HELLO, b.membership.hello())
            b.membership.greeted(canonical.parse(answer.content), a_id)
            kept.append(time.perf_counter() - began)
        fresh: list[float] = []
        for _ in range(max(20, runs // 5)):
            # new trust: a new client, a new handshake
            b.trust.update(b.membership.pinned(), b.membership.certificates())
            began = time.perf_counter()
            answer = await b.dialer.send(member, "POST", listener.HELLO, b.membership.hello())
            fresh.append(time.perf_counter() - began)
        key = b.membership.swarm.swarm_key
        nonces = signing.Nonces()
        alone: list[float] = []
        for _ in range(runs):
            began = time.perf_counter()
            headers = signing.sign(
                b.membership.identity, key, "POST", "/swarm/hello", b"{}", to=a_id, now=time.time()
            )
            signing.verify_request(
                "POST",
                "/swarm/hello",
                headers,
                b"{}",
                members=a.membership.members,
                swarm_key=key,
                recipient=a_id,
                nonces=nonces,
                now=time.time(),
            )
            alone.append(time.perf_counter() - began)
        print(f"hello, open connection      {ms(kept)}")
        print(f"hello, new connection       {ms(fresh)}")
        print(f"sign + verify               {ms(alone)}")
        await swarm.stop()


async def joins(runs: int, members: int) -> list[float]:
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as root:
            swarm = Swarm(Path(root), members + 1)
            await swarm.start()
            await swarm.form()
            admitter, last = swarm.nodes[0], swarm.nodes[-1]
            await last.leave()
            began = time.perf_counter()
            await last.join(admitter.listening or "", admitter.invite(60).token)
            times.append(time.perf_counter() - began)
            await swarm.stop()
    return times


async def revokes(runs: int, count: int) -> list[float]:
    times = []
    with tempfile.TemporaryDirectory() as root:
        swarm = Swarm(Path(root), count)
        await swarm.start()
        await swarm.form()
        admitter, last = swarm.nodes[0], swarm.nodes[-1]
        for _ in range(runs):
            began = time.perf_counter()
            await admitter.revoke(last.membership.identity.node_id)
            times.append(time.perf_counter() - began)
            assert all(
                node.membership.members[last.membership.identity.node_id].revoked for node in swarm.nodes[:-1]
            )
            await last.leave()
            await last.join(admitter.listening or "", admitter.invite(60).token)
        await swarm.stop()
    return times


def _exchange(node: Mesh):  # type: ignore[no-untyped-def]
    assert node.exchange is not None
    return node.exchange


async def linked(swarm: Swarm, timeout: float = 60.0) -> None:
    """Until every node holds a reachable frame of every other node."""
    deadline = time.monotonic() + timeout
    want = len(swarm.nodes) - 1
    while time.monotonic() < deadline:
        if all(sum(p.reachable for p in _exchange(n).peers.all()) == want for n in swarm.nodes):
            return
        await asyncio.sleep(0.05)
    raise SystemExit("the nodes did not link in time")


async def _arrival(subscription: Subscription, key: str) -> float:
    while True:
        batch = await subscription.next(5.0)
        if batch is None:
            raise SystemExit("a feed closed")
        if any((change.record or {}).get("session_key") == key for change in batch):
            return time.perf_counter()


async def propagation(runs: int, count: int) -> tuple[list[float], list[float], list[float]]:
    """(own feed, each other node's feed, the slowest other node) per claim, in seconds."""
    own, each, slowest = [], [], []
    with tempfile.TemporaryDirectory() as root:
        swarm = Swarm(Path(root), count)
        await swarm.start()
        await swarm.form()
        await linked(swarm)
        feeds: list[Feed] = [_exchange(node).feed for node in swarm.nodes]
        subscriptions = [feed.subscribe(feed.head, feed.epoch) for feed in feeds]
        claimer = _exchange(swarm.nodes[0]).live
        for run in range(runs):
            process = ProcessId(10_000 + run, 1)
            key = records.session_key(claimer.roster.node_id, process.pid, 1)
            waiting = [asyncio.ensure_future(_arrival(sub, key)) for sub in subscriptions]
            await asyncio.sleep(0)
            began = time.perf_counter()
            claimer.apply(Claim(source="hook", received_at=time.time(), process=process, activity="working"))
            arrived = await asyncio.gather(*waiting)
            own.append(arrived[0] - began)
            each += [at - began for at in arrived[1:]]
            slowest.append(max(arrived[1:]) - began)
        for sub in subscriptions:
            sub.__exit__()
        await swarm.stop()
    return own, each, slowest


async def idle(count: int, seconds: float) -> None:
    """CPU and memory per peer, each node's links against the same nodes in no swarm."""
    me = psutil.Process()
    with tempfile.TemporaryDirectory() as root:
        swarm = Swarm(Path(root), count)
        await swarm.start()
        before_rss, began = me.memory_info().rss, me.cpu_times()
        await asyncio.sleep(seconds)
        after = me.cpu_times()
        alone = (after.user + after.system - began.user - began.system) / seconds
        await swarm.form()
        await linked(swarm)
        await asyncio.sleep(1.0)
        linked_rss, began = me.memory_info().rss, me.cpu_times()
        await asyncio.sleep(seconds)
        after = me.cpu_times()
        busy = (after.user + after.system - began.user - began.system) / seconds
        pairs = count * (count - 1)
        print(
            f"idle, {count} nodes, per peer     CPU {max(0.0, busy - alone) / pairs * 100:6.3f} % of a core "
            f"(no swarm: {alone * 100:.3f} % for all {count})   "
            f"memory {(linked_rss - before_rss) / pairs / 1024:6.1f} KiB   (over {seconds:.0f} s)"
        )
        await swarm.stop()


def _frame(node_id: str, sessions: int) -> dict[str, object]:
    listed = [
        records.to_json(
            records.Record(
                f"peer-{node_id}", node_id, f"{node_id}:{pid}:7", pid, 7, time.time() - 60,
                harness="claude", lane="headless", name=f"task {pid}", activity="active",
                cwd=f"/home/u/p{pid}",
                sources=("hook", "scan"), activity_event="PreToolUse", activity_at=time.time(), revision=3,
            )
        )
        for pid in range(100, 100 + sessions)
    ]  # fmt: skip
    return {"schema": records.SCHEMA, "node": f"peer-{node_id}", "node_id": node_id, "status_epoch": 1,
            "seq": 1, "generated_at": None, "records": listed}  # fmt: skip


def union(runs: int, peers: int = 100, sessions: int = 50) -> None:
    kept = Peers("self")
    began = time.perf_counter()
    for index in range(peers):
        kept.frame(f"p{index:04d}", _frame(f"p{index:04d}", sessions), time.time())
    taking = (time.perf_counter() - began) / peers
    roster = Roster("self", "self", time.time)
    for pid in range(100, 100 + sessions):
        roster.apply(
            Claim(source="hook", received_at=time.time(), process=ProcessId(pid, 7), activity="working")
        )

    def whole(epoch: int, seq: int) -> dict[str, object]:
        from roost.remote.swarm import union

        return union.document("self", "self", roster.records(), kept, epoch=epoch, seq=seq, now=time.time())

    feed = Feed("self", "self", whole, time.time)
    swarm_times, local_times, size = [], [], 0
    for _ in range(runs):
        began = time.perf_counter()
        size = len(json.dumps(feed.snapshot(), separators=(",", ":")))
        swarm_times.append(time.perf_counter() - began)
        began = time.perf_counter()
        json.dumps(roster.snapshot(), separators=(",", ":"))
        local_times.append(time.perf_counter() - began)
    ratio = statistics.median(swarm_times) / statistics.median(local_times)
    print(
        f"union of {peers} x {sessions}          {ms(swarm_times)}   {size / 1e6:.1f} MB   {ratio:.0f}x local"
    )
    print(f"local /snapshot of {sessions}         {ms(local_times)}")
    print(f"a peer frame of {sessions} taken      {taking * 1000:7.2f} ms (every record checked)")
    frame = len(json.dumps(_frame("p0000", sessions), separators=(",", ":")))
    change = len(json.dumps({"seq": 1, "event": "activity", "record": _frame("p0000", 1)["records"][0]}))  # type: ignore[index]
    print(f"on the wire: a frame of {sessions} {frame / 1024:6.1f} KiB, a change {change / 1024:.1f} KiB "
          f"({frame / change:.0f}x): frames on connect, changes after")  # fmt: skip


ADAPTER = ROOT / "tests" / "fakes" / "acp_adapter.py"


def daemon(box: Sandbox, name: str, address: str) -> Daemon:
    config = box.root / "config" / "roost"
    config.mkdir(parents=True)
    (config / "rosterd.toml").write_text(
        f'[node]\nname = "{name}"\nlisten = "{address}"\nport = {PORT + 1}\n'
        f"loopback_port = {free_port()}\nhook_port = 0\n"
        f'[harness.fake]\nadapter = "{PYTHON} {ADAPTER}"\n'
    )
    found = Daemon(box)
    found.start()
    return found


def prompts(rounds: int) -> None:
    """A prompt waited for idle, made on its session's node and through another, round by round
    (the order rotating each round, so a noisy neighbour slows both alike)."""
    with Sandbox() as a_box, Sandbox() as b_box:
        started: list[Daemon] = []
        try:
            a = daemon(a_box, "a", "127.0.0.2")
            started.append(a)
            b = daemon(b_box, "b", "127.0.0.3")
            started.append(b)
            token = a.post("/swarm/invite", {"ttl_minutes": 60})["token"]
            b.post("/swarm/join", {"address": f"127.0.0.2:{PORT + 1}", "token": token})
            key = a.post("/sessions", {"harness": "fake", "cwd": str(a_box.root)})["record"]["session_key"]
            times: dict[str, list[float]] = {"local": [], "proxied": []}
            pair = [("local", a), ("proxied", b)]
            for turn in range(rounds):
                for name, via in pair if turn % 2 else reversed(pair):
                    began = time.perf_counter()
                    via.post(f"/sessions/{key}/prompt", {"text": "hello", "wait": "idle"})
                    times[name].append(time.perf_counter() - began)
            a.post(f"/sessions/{key}/stop", {})
            print(f"prompt to idle, local       {ms(times['local'])}")
            print(f"prompt to idle, proxied     {ms(times['proxied'])}")
            ratio = statistics.median(times["proxied"]) / statistics.median(times["local"])
            added = (statistics.median(times["proxied"]) - statistics.median(times["local"])) * 1000
            print(f"proxied / local (p50)       {ratio:7.2f}x   (+{added:.1f} ms)")
        finally:
            for found in started:
                if found.proc is not None and found.proc.poll() is None:
                    found.proc.terminate()
                    found.proc.wait()
            end_holders(a_box)


CASES = ("hello", "join", "revoke", "claim", "idle", "union", "prompt")


async def main(runs: int, cases: set[str]) -> None:
    if "hello" in cases:
        await hellos(runs)
    for members in (1, 9) if "join" in cases else ():
        print(f"join, {members} member(s) in      {ms(await joins(max(3, runs // 100), members))}")
    for count in (3, 10) if "revoke" in cases else ():
        print(f"revoke, {count:2d} nodes            {ms(await revokes(max(5, runs // 50), count))}")
    for count in (3, 10) if "claim" in cases else ():
        own, each, slowest = await propagation(max(50, runs // 3), count)
        ratio = statistics.median(slowest) / statistics.median(own)
        print(f"claim, own feed ({count:2d})       {ms(own)}")
        print(f"claim to one peer ({count:2d})     {ms(each)}")
        print(f"claim to every peer ({count:2d})   {ms(slowest)}   {ratio:.0f}x own feed")
    for count in (3, 10) if "idle" in cases else ():
        await idle(count, 20.0)
    if "union" in cases:
        union(max(5, runs // 30))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--only", default=",".join(CASES), help="cases to run, comma-separated")
    options = parser.parse_args()
    chosen = set(options.only.split(","))
    if chosen - set(CASES):
        parser.error(f"--only takes {', '.join(CASES)}")
    asyncio.run(main(options.runs, chosen))
    if "prompt" in chosen:
        prompts(max(10, options.runs // 10))
