"""The swarm listener's connections: what anyone may hold open before the door knows who it is.

The listener faces the tailnet, so a stranger can open connections to it. Every connection is
bounded from the moment it is accepted, before TLS, so that nothing a stranger does costs this
node more than a few kilobytes and a few seconds per connection, and a fixed number of them:

- **At accept**, before a byte is read: a connection beyond :attr:`Limits.per_address` from
  one address (:attr:`Limits.stranger_per_address` of them not yet known to be a member's), or
  beyond the descriptor budget (:attr:`Limits.total`) in all, is closed at once. Past
  :attr:`Limits.strangers` not yet known to be a member's in all, the oldest of them is closed
  to make room: a flood from many addresses then costs each of its connections its place
  within milliseconds, while a member's handshake, which takes a few, still gets through.
- **The TLS handshake** must finish within :attr:`Limits.handshake_s`; a client certificate is
  checked in it (:mod:`roost.remote.mesh.tls`), and a connection that presented a member's is counted
  against that member (:attr:`Limits.per_member`) rather than against the strangers.
- **A request's headers** must arrive whole within :attr:`Limits.header_s` of the connection's
  start or of the last answer on it; a connection that sends nothing, or dribbles its headers,
  is closed (h11 bounds their size). The door says when a request's headers came
  (:meth:`Connections.begun`) and when its answer ended (:meth:`Connections.ended`); a request's
  body has a deadline of its own, in the door.

The HTTP protocol on top is uvicorn's own: each connection, once its handshake is done, is
handed to a fresh instance of it, as uvicorn's own server would.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger("rosterd.swarm")

BACKLOG = 64
"""Connections the kernel queues for the listener, and at most how many asyncio takes in at
one turn of the loop. A batch taken in is made transports on the next turn, counted here on
the one after, and a refused one's descriptor is freed on the turn after that; the listener is
ready again on each of those turns, so under a flood it holds at most four such batches more
than its limits allow, for those moments, however long the flood lasts."""
HANDSHAKE_S = 5.0
HEADER_S = 10.0
SWEEP_S = 0.5
CLIENT = "(client)"
"""What a connection that presented this node's bearer token counts as, in place of a member."""
RESERVED_FDS = 256
"""Descriptors the daemon keeps for everything but the swarm listener: its sockets, tmux's
control clients, holders, taps, files."""


MAX_BUDGET = 8192
"""Connections the listener holds at most, whatever the limit: two streams and a few requests
for each of a thousand members, with room."""


def budget(share: float = 0.5) -> int:
    """How many swarm connections the daemon's descriptor limit leaves room for: ``share`` of
    what is left once :data:`RESERVED_FDS` are set aside, from 64 to :data:`MAX_BUDGET`."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_BUDGET
    return min(MAX_BUDGET, max(64, int((soft - RESERVED_FDS) * share)))


@dataclass(frozen=True)
class Limits:
    """What connections may cost, per address, per member and in all."""

    total: int = field(default_factory=budget)
    per_address: int = 64
    """Connections from one address, in any state (a member's streams, acts and relayed
    terminals come from its one address)."""
    strangers: int = 128
    """Connections not (yet) known to be a member's, in all."""
    stranger_per_address: int = 8
    per_member: int = 64
    handshake_s: float = HANDSHAKE_S
    header_s: float = HEADER_S


@dataclass(eq=False)
class _Connection:
    address: str
    peername: tuple[str, int]
    raw: asyncio.Transport
    opened: float
    member: str | None = None
    certificate: bytes | None = None
    deadline: float | None = None
    """When the next request's headers must have come; None while a request is served."""


class Connections:
    """The listener's connections: accepted here, bounded, and handed to uvicorn's protocol."""

    def __init__(
        self,
        context: ssl.SSLContext,
        protocol: Callable[[], asyncio.Protocol],
        member_of: Callable[[bytes], str | None],
        limits: Limits | None = None,
    ) -> None:
        self.context = context
        self.protocol = protocol
        self.member_of = member_of
        """The node id whose certificate this is, when it is a known node's."""
        self.limits = limits or Limits()
        self.open: dict[tuple[str, int], _Connection] = {}
        self._due: dict[tuple[str, int], _Connection] = {}
        """The connections whose next request's headers are due (a deadline set): what the
        sweep looks at, not every stream held open (two a peer, a thousand peers)."""
        self.refused: dict[str, int] = {}
        self._server: asyncio.Server | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    # -- what the door asks ---------------------------------------------------------------

    def certificate(self, peername: object) -> bytes | None:
        """The certificate the client on this connection presented and the handshake checked."""
        found = self.open.get(peername) if isinstance(peername, tuple) else None
        return found.certificate if found is not None else None

    def vouch(self, peername: object, member: str = CLIENT) -> None:
        """The connection proved whose it is without a certificate: this node's bearer token
        (a client, :data:`CLIENT`) or an invite this node admitted (the joiner's node id). It
        is counted as theirs rather than as a stranger's, so a flood of strangers does not push
        out a client's long-lived streams, nor a joiner waiting for its answer while the
        admission's round greets every member."""
        found = self.open.get(peername) if isinstance(peername, tuple) else None
        if found is not None and found.member is None:
            found.member = member

    def begun(self, peername: object) -> None:
        """A request's headers arrived whole: no header deadline while it is served."""
        found = self.open.get(peername) if isinstance(peername, tuple) else None
        if found is not None:
            found.deadline = None
            self._due.pop(found.peername, None)

    def ended(self, peername: object) -> None:
        """A request's answer ended: the next request's headers are due."""
        found = self.open.get(peername) if isinstance(peername, tuple) else None
        if found is not None:
            self._expect(found)

    # -- serving --------------------------------------------------------------------------

    async def serve(self, sock: object) -> None:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _Accepted(self), sock=sock, backlog=BACKLOG)  # type: ignore[arg-type]
        self._sweeper = asyncio.create_task(self._sweep())

    def stop_accepting(self) -> None:
        """No new connection from now on; the listening socket is closed."""
        if self._server is not None:
            self._server.close()

    async def close(self) -> None:
        """Every connection ends now, whatever it was doing."""
        self.stop_accepting()
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        for task in list(self._tasks):
            task.cancel()
        for connection in list(self.open.values()):
            connection.raw.abort()
        self.open.clear()
        self._due.clear()

    def describe(self) -> dict[str, object]:
        """What ``rosterd nodes --json`` shows of the listener's connections."""
        self._forget_closed()
        limits = self.limits
        return {
            "open": len(self.open),
            "members": len([c for c in self.open.values() if c.member is not None]),
            "limits": {
                "total": limits.total,
                "per_address": limits.per_address,
                "strangers": limits.strangers,
                "stranger_per_address": limits.stranger_per_address,
                "per_member": limits.per_member,
                "handshake_s": limits.handshake_s,
                "header_s": limits.header_s,
                "backlog": BACKLOG,
            },
            "refused": dict(sorted(self.refused.items())),
        }

    def _refuse(self, raw: asyncio.Transport, why: str) -> None:
        self.refused[why] = self.refused.get(why, 0) + 1
        raw.abort()

    def accepted(self, raw: asyncio.Transport) -> None:
        """A new TCP connection: count it, refuse it when it is one too many, else shake hands."""
        peername = raw.get_extra_info("peername")
        if not isinstance(peername, tuple):
            raw.abort()
            return
        self._forget_closed()
        address = str(peername[0])
        limits = self.limits
        here = [c for c in self.open.values() if c.address == address]
        strangers = [c for c in self.open.values() if c.member is None]
        if len(self.open) >= limits.total:
            self._refuse(raw, "total")
            return
        if len(here) >= limits.per_address:
            self._refuse(raw, "per_address")
            return
        if len([c for c in here if c.member is None]) >= limits.stranger_per_address:
            self._refuse(raw, "stranger_per_address")
            return
        if len(strangers) >= limits.strangers:
            self._drop(min(strangers, key=lambda c: c.opened), "strangers")
        raw.pause_reading()
        connection = _Connection(address, peername, raw, asyncio.get_running_loop().time())
        self.open[peername] = connection
        task = asyncio.ensure_future(self._shake(connection))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _shake(self, connection: _Connection) -> None:
        loop = asyncio.get_running_loop()
        protocol = _Held(self.protocol())
        try:
            transport = await loop.start_tls(
                connection.raw,
                protocol,
                self.context,
                server_side=True,
                ssl_handshake_timeout=self.limits.handshake_s,
            )
        except (OSError, ssl.SSLError, TimeoutError, ConnectionError, asyncio.CancelledError):
            self._drop(connection, "handshake")
            return
        if transport is None:
            self._drop(connection, "handshake")
            return
        ssl_object = transport.get_extra_info("ssl_object")
        der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
        if der:
            connection.certificate = bytes(der)
            connection.member = self.member_of(connection.certificate)
            mine = [c for c in self.open.values() if c.member is not None and c.member == connection.member]
            if connection.member is not None and len(mine) > self.limits.per_member:
                transport.abort()
                self._drop(connection, "per_member")
                return
        self._expect(connection)
        protocol.attach(transport)

    def _expect(self, connection: _Connection) -> None:
        """The connection's next request's headers are due within :attr:`Limits.header_s`."""
        connection.deadline = asyncio.get_running_loop().time() + self.limits.header_s
        self._due[connection.peername] = connection

    def _drop(self, connection: _Connection, why: str) -> None:
        self.refused[why] = self.refused.get(why, 0) + 1
        connection.raw.abort()
        self.open.pop(connection.peername, None)
        self._due.pop(connection.peername, None)

    def _forget_closed(self) -> None:
        for peername in [p for p, c in self.open.items() if c.raw.is_closing()]:
            del self.open[peername]
            self._due.pop(peername, None)

    async def _sweep(self) -> None:
        """Close each connection whose headers are overdue, every :data:`SWEEP_S`; forget each
        closed one among them. Streams held open are not looked at (they are forgotten once
        closed at the next accept), so a sweep costs the connections between requests alone."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(SWEEP_S)
            now = loop.time()
            for connection in list(self._due.values()):
                if connection.raw.is_closing():
                    self.open.pop(connection.peername, None)
                    self._due.pop(connection.peername, None)
                elif connection.deadline is not None and now > connection.deadline:
                    log.info("closed a swarm connection from %s: no request in time", connection.address)
                    self._drop(connection, "header_timeout")


class _Accepted(asyncio.Protocol):
    """The first protocol of an accepted connection: it only hands it to :class:`Connections`,
    which replaces it at the TLS handshake."""

    def __init__(self, connections: Connections) -> None:
        self.connections = connections

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.connections.accepted(transport)


class _Held(asyncio.Protocol):
    """The HTTP protocol of a connection, held back until the handshake's caller hands it the
    transport: what arrived right behind the handshake is kept and passed on after."""

    def __init__(self, inner: asyncio.Protocol) -> None:
        self.inner = inner
        self.early: list[bytes] = []
        self.attached = False
        self.eof = False

    def attach(self, transport: asyncio.Transport) -> None:
        self.inner.connection_made(transport)
        self.attached = True
        for data in self.early:
            self.inner.data_received(data)
        self.early.clear()
        if self.eof:
            self.inner.eof_received()

    def data_received(self, data: bytes) -> None:
        if self.attached:
            self.inner.data_received(data)
        else:
            self.early.append(data)

    def eof_received(self) -> bool | None:
        if self.attached:
            return self.inner.eof_received()
        self.eof = True
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if self.attached:
            self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self.attached:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.attached:
            self.inner.resume_writing()
