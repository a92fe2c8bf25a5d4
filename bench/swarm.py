"""Benchmark the swarm's transport: signed requests over pinned TLS, joining, and a revocation
reaching every member.

Every node here is a real :class:`roost.mesh.node.Mesh` (listener, dialer, rounds, swarm.json
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
- ``prompt``: two real daemons (node ``a`` on 127.0.0.2, ``b`` on 127.0.0.3) and a headless
  session on ``a`` over the fake ACP adapter; one prompt waited for idle, sent to ``a`` itself
  and, in the same rounds, to ``b``, which forwards it to ``a`` (``POST /swarm/act``: a new
  pinned TLS connection, the act run through ``a``'s own route). The ratio is the proxied
  prompt's cost against the same prompt made locally.

Run: ``.venv/bin/python bench/swarm.py [--runs N]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from common import PYTHON, ROOT, Sandbox
from headless import Daemon, end_holders, free_port

from roost.mesh import listener
from roost.mesh.node import Mesh
from roost.mesh.place import Place
from roost.swarm import canonical, signing
from roost.swarm.identity import Identity

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
            directory = root / f"n{first + index}"
            directory.mkdir(mode=0o700)
            self.nodes.append(
                Mesh(
                    directory,
                    Identity.generate(f"n{first + index}"),
                    name=f"n{first + index}",
                    place=Place(f"127.0.0.{first + index}", PORT, "bench"),
                    static_peers=(),
                    use_tailscale=False,
                    version="bench",
                    clock=time.time,
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
        address = a.listening or ""
        kept: list[float] = []
        for _ in range(runs):
            began = time.perf_counter()
            answer = await b.dialer.send(address, "POST", listener.HELLO, b.membership.hello())
            b.membership.greeted(canonical.parse(answer.content))
            kept.append(time.perf_counter() - began)
        fresh: list[float] = []
        for _ in range(max(20, runs // 5)):
            b.trust.update(b.membership.certificates())  # new trust: a new client, a new handshake
            began = time.perf_counter()
            answer = await b.dialer.send(address, "POST", listener.HELLO, b.membership.hello())
            fresh.append(time.perf_counter() - began)
        key = b.membership.swarm.swarm_key
        nonces = signing.Nonces()
        alone: list[float] = []
        for _ in range(runs):
            began = time.perf_counter()
            headers = signing.sign(b.membership.identity, key, "POST", "/swarm/hello", b"{}", now=time.time())
            signing.verify_request(
                "POST",
                "/swarm/hello",
                headers,
                b"{}",
                members=a.membership.members,
                swarm_key=key,
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


ADAPTER = ROOT / "tests" / "fakes" / "acp_adapter.py"


def daemon(box: Sandbox, name: str, address: str) -> Daemon:
    config = box.root / "config" / "roost"
    config.mkdir(parents=True)
    (config / "rosterd.toml").write_text(
        f'[node]\nname = "{name}"\nlisten = "{address}"\nport = {PORT + 1}\nloopback_port = {free_port()}\n'
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


async def main(runs: int) -> None:
    await hellos(runs)
    for members in (1, 9):
        print(f"join, {members} member(s) in      {ms(await joins(max(3, runs // 100), members))}")
    for count in (3, 10):
        print(f"revoke, {count:2d} nodes            {ms(await revokes(max(5, runs // 50), count))}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    runs = parser.parse_args().runs
    asyncio.run(main(runs))
    prompts(max(10, runs // 10))
