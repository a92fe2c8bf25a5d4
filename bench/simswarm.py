"""Simulated swarm peers: many nodes in one process, each speaking the real wire protocol to
the real daemons it shares a swarm with.

A :class:`SimPeer` is what a real node is on the wire, as far as a real daemon can tell: a node
id and an Ed25519 key of its own (:class:`~roost.remote.swarm.identity.Identity`), admitted
through the real invite and join (:meth:`SimPeer.join`: the admitter's certificate checked
against the invite, the sealed swarm key opened, the member list judged by roost's own
:class:`~roost.remote.mesh.membership.Membership`), a TLS listener on an address of its own that
pins the real daemons' certificates both ways, every request it sends signed for its recipient
and every request it takes checked (:mod:`roost.remote.swarm.signing`), a hello every round, a
roster stream served to each real daemon (a frame, then one ``change`` event per change, and a
keep-alive after 4 s of quiet) and each real daemon's stream followed.

What it leaves out is what only costs the simulator: it greets and follows the real daemons
alone (not its fellow simulated peers), and it takes the member records a real daemon's hello
carries without merging them. A real daemon sees exactly what N real nodes would send it.

Every change a peer makes is stamped (:attr:`SimPeer.emitted`, by session key and revision) so
a reader of a real daemon's ``/swarm/changes`` can tell how long each took to arrive.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import secrets
import ssl
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import h11
import httpx

from roost import __version__
from roost.base import sse
from roost.base.errors import PeerRefused
from roost.remote.mesh import tls
from roost.remote.mesh.connections import HEADER_S
from roost.remote.mesh.membership import CAPABILITIES, Membership
from roost.remote.mesh.node import JOIN_TIMEOUT
from roost.remote.mesh.rounds import QUIET_MAX, QUIET_MIN
from roost.remote.swarm import canonical, hello, invites, members, signing
from roost.remote.swarm.identity import Identity, pinned
from roost.remote.swarm.members import MAX_SET_DOCUMENT, Member, Standing
from roost.truth.roster.records import SCHEMA, Record, session_key, to_json
from roost.truth.roster.times import to_wire

PORT = 8791
KEEPALIVE = 4.0
"""As a real node: a keep-alive after this many quiet seconds."""
ROUND = 30.0
"""As a real node: a hello to each member every round."""
READ_LIMIT = 1 << 16
ROSTER = "/swarm/roster"


def host_of(index: int) -> str:
    """The loopback address of the ``index``-th simulated peer: 127.1.0.1, 127.1.0.2, …"""
    return f"127.{1 + index // 62500}.{(index // 250) % 250}.{index % 250 + 1}"


class Roll:
    """The member set every simulated peer holds, kept once for all of them (they all learn
    the same records, from the same real daemons): merged by roost's own rule, and named by
    the digest a hello carries, so a real daemon that holds the same set sends them none."""

    def __init__(self) -> None:
        self.standings: dict[str, Standing] = {}
        self.digest: str | None = None
        self.watched: set[str] = set()
        """Members whose spread is timed: each peer notes when it first heard of each."""

    def start(self, standings: Mapping[str, Standing]) -> None:
        """The first joiner's member list, judged by its join, as the roll's first set."""
        if not self.standings:
            self.standings = dict(standings)

    def take(self, records: list[object]) -> None:
        merged = members.merge(self.standings, records, now=time.time())
        if merged.changed or self.digest is None:
            self.standings = dict(merged.standings)
            self.digest = members.digest(members.held(self.standings))


@dataclass
class SimPeer:
    index: int
    sessions: int
    roll: Roll
    identity: Identity = field(default_factory=lambda: Identity.generate(secrets.token_hex(8)))
    reals: dict[str, Member] = field(default_factory=dict)
    swarm_key: bytes = b""
    swarm_id: str = ""
    own_record: dict[str, object] | None = None
    records: dict[str, Record] = field(default_factory=dict)
    emitted: dict[tuple[str, int], float] = field(default_factory=dict)
    """When each change was made (``time.monotonic()``), by session key and revision."""
    silent: bool = False
    """Stops answering and writing, as a machine whose cable was pulled."""
    received: int = 0
    """Bytes read from the real daemons' streams."""
    hellos_sent: int = 0
    """Hellos this peer sent a real daemon."""
    hellos_taken: int = 0
    """Hellos a real daemon sent this peer."""
    served_changes: int = 0
    learned: dict[str, float] = field(default_factory=dict)
    """When this peer first heard of each watched member (``time.monotonic()``), by node id: its
    own knowledge, though the roll they merge into is shared."""
    _seq: int = 0
    _queues: set[asyncio.Queue[bytes]] = field(default_factory=set)
    _nonces: signing.Nonces = field(default_factory=signing.Nonces)
    _told: dict[str, str] = field(default_factory=dict)
    _spoke: float = 0.0
    _server: asyncio.Server | None = None
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _writers: set[asyncio.StreamWriter] = field(default_factory=set)

    @property
    def name(self) -> str:
        return f"sim{self.index}"

    @property
    def host(self) -> str:
        return host_of(self.index)

    @property
    def address(self) -> str:
        return f"{self.host}:{PORT}"

    # -- joining ---------------------------------------------------------------------------

    async def join(self, token: str) -> None:
        """Join through the invite's admitter exactly as ``rosterd join`` does, then sign this
        node's own record and greet every real daemon with it."""
        invite = invites.read(token)
        der = await self._presented(invite.admitter_address)
        if not pinned(der, invite.admitter_public_key):
            raise RuntimeError("the admitter's certificate is not the invite's")
        context = tls.server_context(self.identity, [der])
        if self._server is not None:  # a join tried again
            self._server.close()
            await self._server.wait_closed()
        self._server = await asyncio.start_server(self._connection, self.host, PORT, ssl=context, backlog=64)
        with tempfile.TemporaryDirectory() as directory:
            membership = Membership(
                Path(directory), self.identity, name=self.name, address=self.address,
                version=__version__, clock=time.time,
            )  # fmt: skip
            joining = {"token": token, "hello": membership.joining_hello(invite.swarm_id)}
            async with self._trusting([der], identity=False, timeout=JOIN_TIMEOUT) as client:
                answer = await client.post(
                    f"https://{invite.admitter_address}/swarm/join",
                    content=canonical.encode(joining),
                    headers={"content-type": "application/json"},
                )
            if answer.status_code != 200:
                raise RuntimeError(f"join refused: {answer.status_code} {answer.text[:200]}")
            joined = canonical.parse(answer.content, MAX_SET_DOCUMENT)
            membership.joined(invite, joined)
            self.swarm_key = membership.swarm.swarm_key
            self.swarm_id = membership.swarm.swarm_id
            self.own_record = membership.standings[self.identity.node_id].current.document
            self.roll.start(membership.standings)
            self.roll.take([*joined["members"], self.own_record])
            self._learn(joined["members"])
            self.reals = {
                node_id: member
                for node_id, member in membership.members.items()
                if not member.revoked and not member.name.startswith("sim")
            }
        others = [
            m.certificate for m in self.reals.values() if m.certificate is not None and m.certificate != der
        ]
        for certificate in others:
            context.load_verify_locations(cadata=ssl.DER_cert_to_PEM_cert(certificate))
        await self.greet_all()

    def hello(self, to: str) -> dict[str, object]:
        """As a real node's: no records to a member that holds the set this one holds, else
        this node's own (the one record a real daemon may lack from it)."""
        assert self.own_record is not None
        same = self._told.get(to) == self.roll.digest
        return hello.make(
            self.identity, name=self.name, version=__version__, swarm_id=self.swarm_id,
            address=self.address, capabilities=list(CAPABILITIES),
            members=[] if same else [self.own_record], now=time.time(), digest=self.roll.digest,
        )  # fmt: skip

    def heard(self, document: object) -> None:
        """A real daemon's hello: its records into the roll, and the set it says it holds."""
        if isinstance(document, dict):
            said = document.get("members")
            if isinstance(said, list) and said:
                self.roll.take(said)
                self._learn(said)
            if isinstance(document.get("digest"), str) and isinstance(document.get("node_id"), str):
                self._told[document["node_id"]] = document["digest"]

    def _learn(self, said: object) -> None:
        """Note the watched members whose records ``said`` (member records) carries."""
        if not self.roll.watched or not isinstance(said, list):
            return
        now = time.monotonic()
        for record in said:
            node_id = record.get("node_id") if isinstance(record, dict) else None
            if node_id in self.roll.watched and node_id not in self.learned:
                self.learned[node_id] = now

    def _client(self, member: Member, timeout: httpx.Timeout | float = 5.0) -> httpx.AsyncClient:
        assert member.certificate is not None
        return self._trusting([member.certificate], timeout=timeout)

    def _trusting(
        self, certificates: list[bytes], *, timeout: httpx.Timeout | float = 5.0, identity: bool = True
    ) -> httpx.AsyncClient:
        """A client from this peer's own address (each real node has its own; a real daemon
        caps connections per address), trusting ``certificates`` alone."""
        context = tls.client_context(self.identity if identity else None, certificates)
        transport = httpx.AsyncHTTPTransport(verify=context, local_address=self.host)
        return httpx.AsyncClient(transport=transport, timeout=timeout, trust_env=False)

    async def _presented(self, address: str) -> bytes:
        """The certificate the listener at ``address`` presents, not yet trusted."""
        host, _, port = address.rpartition(":")
        reader, writer = await asyncio.open_connection(
            host, int(port), ssl=tls.unverified_context(), server_hostname="", local_addr=(self.host, 0)
        )
        der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
        writer.close()
        del reader
        return bytes(der)

    async def greet(self, member: Member) -> int:
        self.hellos_sent += 1
        body = canonical.encode(self.hello(member.node_id))
        headers = signing.sign(
            self.identity, self.swarm_key, "POST", "/swarm/hello", body, to=member.node_id, now=time.time()
        )
        headers["content-type"] = "application/json"
        async with self._client(member) as client:
            answer = await client.post(f"https://{member.address}/swarm/hello", content=body, headers=headers)
        if answer.status_code == 200:
            self.heard(canonical.parse(answer.content, MAX_SET_DOCUMENT))
        return answer.status_code

    async def greet_all(self) -> None:
        for member in self.reals.values():
            with contextlib.suppress(httpx.HTTPError, ssl.SSLError, OSError):
                await self.greet(member)

    # -- its roster ------------------------------------------------------------------------

    def populate(self) -> None:
        now = time.time()
        for number in range(self.sessions):
            key = session_key(self.identity.node_id, 1000 + number, number + 1)
            self.records[key] = Record(
                node=self.name, node_id=self.identity.node_id, session_key=key, pid=1000 + number,
                start_ticks=number + 1, started_at=now, harness="claude",
                session_id=f"{self.index:08x}-0000-4000-8000-{number:012x}", lane="headless",
                sources=("hook",), name=f"agent-{number}", activity="idle", activity_event="Stop",
                activity_at=now, cwd=f"/home/dev/project-{number % 7}", state="done",
            )  # fmt: skip

    def snapshot(self) -> dict[str, object]:
        return {
            "schema": SCHEMA,
            "node": self.name,
            "node_id": self.identity.node_id,
            "seq": self._seq,
            "status_epoch": 1,
            "records": [to_json(record) for record in self.records.values()],
        }

    def change(self, key: str | None = None) -> tuple[str, int]:
        """One session turns working or done; every stream served gets it as a change event."""
        key = key or random.choice(list(self.records))
        old = self.records[key]
        working = old.activity != "active"
        now = time.time()
        new = old.replace(
            activity="active" if working else "idle",
            activity_event="UserPromptSubmit" if working else "Stop",
            state="working" if working else "done",
            activity_at=now,
            activity_seq=old.activity_seq + 1,
            revision=old.revision + 1,
        )
        self.records[key] = new
        self._seq += 1
        self.emitted[(key, new.revision)] = time.monotonic()
        document = {
            "seq": self._seq,
            "event": "activity",
            "at": to_wire(now),
            "status_epoch": 1,
            "session_key": key,
            "record": to_json(new),
        }
        event = sse.encode("change", json.dumps(document, separators=(",", ":"))).encode()
        for queue in self._queues:
            queue.put_nowait(event)
        self.served_changes += len(self._queues)
        return key, new.revision

    # -- its listener ----------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        connection = h11.Connection(h11.SERVER)
        try:
            while not self.silent:
                # as a real node's door: a connection with no request in time is closed
                request = await asyncio.wait_for(_next(connection, reader), HEADER_S)
                if not isinstance(request, h11.Request):
                    break
                body = b""
                while isinstance(part := await _next(connection, reader), h11.Data):
                    body += part.data
                await self._answer(connection, writer, request, body)
                if connection.our_state is not h11.DONE or connection.their_state is not h11.DONE:
                    break
                connection.start_next_cycle()
        except (OSError, ssl.SSLError, h11.ProtocolError, TimeoutError, asyncio.CancelledError):
            pass  # a connection's end, or the simulator's: asyncio logs a cancelled handler otherwise
        finally:
            self._writers.discard(writer)
            if not self.silent:
                writer.close()

    async def _answer(
        self, connection: h11.Connection, writer: asyncio.StreamWriter, request: h11.Request, body: bytes
    ) -> None:
        method, target = request.method.decode(), request.target.decode()
        headers = {name.decode().lower(): value.decode() for name, value in request.headers}
        try:
            signing.verify_request(
                method, target, headers, body, members=self.reals, swarm_key=self.swarm_key,
                recipient=self.identity.node_id, nonces=self._nonces, now=time.time(),
            )  # fmt: skip
        except PeerRefused:
            await _send(writer, connection, 401, b"{}")
            return
        if method == "POST" and target == "/swarm/hello":
            self.hellos_taken += 1
            said = canonical.parse(body, MAX_SET_DOCUMENT)
            self.heard(said)
            sender = said.get("node_id") if isinstance(said, dict) else None
            await _send(writer, connection, 200, canonical.encode(self.hello(str(sender))))
        elif method == "GET" and target == "/swarm/roster":
            await self._stream(connection, writer)
        else:
            await _send(writer, connection, 404, b"{}")

    async def _stream(self, connection: h11.Connection, writer: asyncio.StreamWriter) -> None:
        head = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
        writer.write(connection.send(h11.Response(status_code=200, headers=head)))
        frame = sse.encode("frame", json.dumps(self.snapshot(), separators=(",", ":"))).encode()
        writer.write(connection.send(h11.Data(data=frame)))
        queue: asyncio.Queue[bytes] = asyncio.Queue()
        self._queues.add(queue)
        try:
            await writer.drain()
            while True:
                try:
                    data = await asyncio.wait_for(queue.get(), KEEPALIVE)
                except TimeoutError:
                    data = sse.KEEPALIVE.encode()
                if self.silent:
                    await asyncio.Event().wait()  # holds the connection open and says nothing
                writer.write(connection.send(h11.Data(data=data)))
                await writer.drain()
        finally:
            self._queues.discard(queue)

    # -- following the real daemons ----------------------------------------------------------

    def run(self) -> None:
        """Follow every real daemon's stream and greet each every round, in the background."""
        for member in self.reals.values():
            self._tasks.append(asyncio.create_task(self._follow(member)))
        self._tasks.append(asyncio.create_task(self._rounds()))

    async def _rounds(self) -> None:
        """As a real node's rounds: a real daemon is greeted unless it is settled (its stream
        spoke within the round, it holds this peer's member set, and it was greeted within its
        quiet time, which doubles with each greeting for time alone, up to QUIET_MAX)."""
        await asyncio.sleep(random.uniform(0, ROUND))
        greeted, quiet = time.monotonic(), QUIET_MIN
        while True:
            now = time.monotonic()
            heard = now - self._spoke < ROUND
            agree = all(self._told.get(node_id) == self.roll.digest for node_id in self.reals)
            if not (heard and agree):
                quiet = QUIET_MIN
            elif now - greeted >= quiet:
                quiet = min(QUIET_MAX, 2 * quiet)
            else:
                await asyncio.sleep(ROUND)
                continue
            if not self.silent:
                await self.greet_all()
                greeted = now
            await asyncio.sleep(ROUND)

    async def _follow(self, member: Member) -> None:
        attempt = 0
        while True:
            if not self.silent:
                headers = signing.sign(
                    self.identity,
                    self.swarm_key,
                    "GET",
                    "/swarm/roster",
                    b"",
                    to=member.node_id,
                    now=time.time(),
                )
                try:
                    async with (
                        self._client(member, httpx.Timeout(3.0, read=10.0)) as client,
                        client.stream(
                            "GET", f"https://{member.address}/swarm/roster", headers=headers
                        ) as answer,
                    ):
                        # as it comes: with a chunk size, httpx would hold every keep-alive
                        # back until that many bytes came, and the peer never knew it was heard
                        async for chunk in answer.aiter_raw():
                            attempt = 0
                            self.received += len(chunk)
                            self._spoke = time.monotonic()
                            if self.silent:
                                await asyncio.Event().wait()
                except (httpx.HTTPError, ssl.SSLError, OSError):
                    pass
            await asyncio.sleep(min(5.0, 0.5 * 2**attempt) * random.uniform(0.8, 1.2))
            attempt += 1

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.close()


async def _next(connection: h11.Connection, reader: asyncio.StreamReader) -> object:
    while True:
        event = connection.next_event()
        if event is not h11.NEED_DATA:
            return event
        connection.receive_data(await reader.read(READ_LIMIT))


async def _send(writer: asyncio.StreamWriter, connection: h11.Connection, status: int, body: bytes) -> None:
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    writer.write(connection.send(h11.Response(status_code=status, headers=head)))
    writer.write(connection.send(h11.Data(data=body)))
    writer.write(connection.send(h11.EndOfMessage()))
    await writer.drain()


def spread(peers: list[SimPeer], rate: float, stop: Callable[[], bool]) -> asyncio.Task[int]:
    """Changes across ``peers`` at ``rate`` a second in all, each on a random session of a
    random peer, until ``stop``; the task's result is how many were made."""

    async def changing() -> int:
        made, start = 0, time.monotonic()
        while not stop():
            due = start + made / rate
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            random.choice(peers).change()
            made += 1
        return made

    return asyncio.create_task(changing())
