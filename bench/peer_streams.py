"""Benchmark what a node pays to read its peers' roster streams at rest: CPU per keep-alive read.

A node follows each peer's roster over a TLS stream that, when nothing changes, carries a
keep-alive comment every few seconds, so at rest most of its event loop's work is reading them.
This script holds ``--streams`` such streams open on loopback (200 by default) against a server
in a process of its own that writes a keep-alive on each every ``--period`` seconds (0.2 s, in
phases spread over the period), and reads them, as the exchange does (``aiter_bytes``), through:

- ``httpx``: an httpx client as httpx makes it (httpcore over anyio), the baseline;
- ``transport``: the mesh's own (:class:`roost.remote.mesh.transport.Transport`), as the
  dialer makes it;
- ``floor``: asyncio's TLS stream read directly, no HTTP at all: what no HTTP client undercuts.

Each client pins the server's certificate and presents its own, as between nodes, and a stream
has its own client, as :meth:`Dialer.stream` gives it. A case opens its streams, lets them
settle, then counts the reads over ``--window`` seconds and this process's CPU time over the
same window (the server's is its own process's). Rounds are interleaved, the order rotated each
round; printed: each case's CPU µs per read (median over rounds) and its ratio to ``httpx``'s.

Run: ``.venv/bin/python bench/peer_streams.py [--streams N] [--rounds N] [--window S]``
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine
from typing import Any

import httpx

from roost.remote.mesh import tls
from roost.remote.mesh.transport import Transport
from roost.remote.swarm.identity import Identity

KEEPALIVE = b": keepalive\n\n"
CHUNK = b"%x\r\n%s\r\n" % (len(KEEPALIVE), KEEPALIVE)


async def serve(client_certificate: bytes, period: float) -> None:
    """The server: every stream asked of it gets a keep-alive each ``period`` seconds."""
    me = Identity.generate("server")

    async def stream(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
            )
            await asyncio.sleep(random.random() * period)
            while True:
                writer.write(CHUNK)
                await writer.drain()
                await asyncio.sleep(period)
        except (ConnectionError, asyncio.IncompleteReadError, OSError):
            pass
        finally:
            writer.close()

    context = tls.server_context(me, [client_certificate])
    server = await asyncio.start_server(stream, "127.0.0.1", 0, ssl=context, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    print(port, me.certificate().hex(), flush=True)
    await asyncio.Event().wait()


class Count:
    reads = 0


async def through_httpx(client: httpx.AsyncClient, url: str, count: type[Count]) -> None:
    async with client, client.stream("GET", url) as response:
        async for _ in response.aiter_bytes():
            count.reads += 1


async def through_asyncio(port: int, context: Any, count: type[Count]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context, server_hostname="")
    try:
        writer.write(b"GET /stream HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        await reader.readuntil(b"\r\n\r\n")
        while await reader.read(65536):
            count.reads += 1
    finally:
        writer.close()


def cases(port: int, context: Any) -> dict[str, Callable[[], Coroutine[Any, Any, None]]]:
    url = f"https://127.0.0.1:{port}/stream"
    timeout = httpx.Timeout(5.0, read=30.0)
    return {
        "httpx": lambda: through_httpx(
            httpx.AsyncClient(verify=context, timeout=timeout, trust_env=False), url, Count
        ),
        "transport": lambda: through_httpx(
            httpx.AsyncClient(transport=Transport(context), timeout=timeout, trust_env=False), url, Count
        ),
        "floor": lambda: through_asyncio(port, context, Count),
    }


async def one(make: Callable[[], Coroutine[Any, Any, None]], streams: int, window: float) -> float:
    """CPU µs per read of ``streams`` streams made by ``make``, over ``window`` seconds."""
    tasks = []
    for _ in range(streams):
        tasks.append(asyncio.create_task(make()))
        await asyncio.sleep(0.005)  # a steady stream of handshakes, not a burst the server refuses
    await asyncio.sleep(1.0)
    failed = [task for task in tasks if task.done()]
    if failed:
        raise RuntimeError(f"{len(failed)} streams ended early: {failed[0].exception()!r}")
    Count.reads = 0
    cpu = time.process_time()
    await asyncio.sleep(window)
    cpu, reads = time.process_time() - cpu, Count.reads
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return cpu / reads * 1e6


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--period", type=float, default=0.2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--window", type=float, default=5.0)
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        await serve(bytes.fromhex(args.serve), args.period)
        return
    tls.lean_buffers()  # as the daemon does
    me = Identity.generate("client")
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", me.certificate().hex(), "--period", str(args.period)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert server.stdout is not None
        port, certificate = server.stdout.readline().split()
        context = tls.client_context(me, [bytes.fromhex(certificate.decode())])
        found = cases(int(port), context)
        names = list(found)
        samples: dict[str, list[float]] = {name: [] for name in names}
        for round_ in range(args.rounds):
            for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
                samples[name].append(await one(found[name], args.streams, args.window))
        print(f"{args.streams} TLS streams, a keep-alive on each every {args.period} s, {args.rounds} rounds")
        base = statistics.median(samples["httpx"])
        for name in names:
            median = statistics.median(samples[name])
            each = " ".join(f"{value:.1f}" for value in samples[name])
            print(f"  {name:<10} {median:6.1f} µs CPU per read  {median / base:5.2f}x httpx  ({each})")
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    asyncio.run(main())
