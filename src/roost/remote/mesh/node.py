"""``Mesh``: this node on the swarm — its listener, its rounds, and the operator's verbs.

The daemon makes one and starts it; the local API's ``/swarm/*`` operator routes call its
verbs (``invite``, ``join``, ``revoke``, ``leave``, ``nodes``), its union routes read the
members' ledgers through :attr:`Mesh.ledgers`, and its terminal route relays another node's
pane through :attr:`Mesh.relay`. With the listener off (no
Tailscale address and none named) it still answers ``nodes`` and says why it is off, and the
verbs that need peers to reach this node refuse with that reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import uvicorn
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute

from roost.base.errors import Conflict, PeerRefused
from roost.remote.mesh import dialer, listener, tls
from roost.remote.mesh.connections import Connections, Limits
from roost.remote.mesh.dialer import Dialer
from roost.remote.mesh.exchange import Exchange
from roost.remote.mesh.ledgers import Ledgers
from roost.remote.mesh.membership import Invited, Membership, listener_off
from roost.remote.mesh.place import Place
from roost.remote.mesh.relay import Relay
from roost.remote.mesh.rounds import Rounds
from roost.remote.swarm import canonical, invites
from roost.remote.swarm.identity import Identity, pinned
from roost.remote.swarm.members import MAX_SET_DOCUMENT
from roost.remote.swarm.peers import Peers
from roost.services.ledger.journal import Journal
from roost.services.ledger.usage import Usage
from roost.truth.roster.live import Live

log = logging.getLogger("rosterd.swarm")

JOIN_TIMEOUT = 20.0
"""Seconds a joiner waits for its admitter, which greets every member before it answers."""
GRACE = 1.0
"""Seconds a stopping listener gives open requests; peers' idle connections are not waited for."""
USER_TIMEOUT_MS = 12_000
"""Milliseconds a peer's connection may leave this node's writes unacknowledged before the
kernel ends it: a roster stream to a peer behind a pulled cable ends within 15 s, since the
stream sends a keep-alive every few seconds (``TCP_USER_TIMEOUT``, which accepted sockets
take from the listening one)."""


def _lost(peers: Peers | None, node_id: str) -> bool:
    """Whether ``node_id``'s roster stream is known lost: nothing waits on it."""
    found = peers.get(node_id) if peers is not None else None
    return found is not None and not found.reachable


def _heard_at(peers: Peers | None, node_id: str) -> float | None:
    """When ``node_id``'s live roster stream last spoke; None when it has no live stream."""
    found = peers.get(node_id) if peers is not None else None
    return found.heard_at if found is not None and found.reachable else None


def _document(data: bytes, limit: int = canonical.MAX_DOCUMENT) -> dict[str, object]:
    try:
        document = canonical.parse(data, limit)
    except ValueError:
        raise PeerRefused("the body is not JSON roost sends", code="malformed") from None
    if not isinstance(document, dict):
        raise PeerRefused("the body is not a JSON object", code="malformed")
    return document


class Mesh:
    """This node's part in the swarm, built once by the daemon."""

    def __init__(
        self,
        directory: Path,
        identity: Identity,
        *,
        name: str,
        place: Place,
        static_peers: tuple[str, ...],
        use_tailscale: bool,
        version: str,
        clock: Callable[[], float],
        routes: Sequence[BaseRoute] = (),
        limits: Mapping[str, int] | None = None,
        live: Live | None = None,
        peers: Peers | None = None,
        ledgers: tuple[Journal, Usage] | None = None,
    ) -> None:
        self.place = place
        self.use_tailscale = use_tailscale
        self.membership = Membership(
            directory, identity, name=name, address=place.address, version=version, clock=clock
        )
        self.trust = tls.Trust(identity, self.membership.pinned(), self.membership.certificates())
        self.membership.listeners.append(
            lambda: self.trust.update(self.membership.pinned(), self.membership.certificates())
        )
        self.dialer = Dialer(self.membership, self.trust)
        self.rounds = Rounds(
            self.membership,
            self.dialer,
            static_peers=static_peers,
            port=place.port,
            clock=clock,
            use_tailscale=use_tailscale,
            lost=lambda node_id: _lost(peers, node_id),
            heard=lambda node_id: _heard_at(peers, node_id),
        )
        self.refusals = listener.Refusals()
        self.exchange = (
            Exchange(self.membership, self.dialer, peers, live, clock)
            if live is not None and peers is not None
            else None
        )
        self.relay = Relay(self.membership, self.trust, dialer.TIMEOUT)
        self.ledgers = (
            Ledgers(self.membership, self.dialer, peers, *ledgers, clock) if ledgers is not None else None
        )
        table = [
            listener.route(listener.HELLO, self._hello),
            listener.route(listener.JOIN, self._join),
            *([self.exchange.route()] if self.exchange is not None else []),
            *([self.ledgers.route()] if self.ledgers is not None else []),
            self.relay.route(),
            *routes,
        ]
        if self.exchange is not None:
            self.membership.listeners.append(self.exchange.sync)
        self.membership.listeners.append(self.relay.sync)
        self.membership.listeners.append(self._if_revoked)
        self._farewell: asyncio.Task[None] | None = None
        self.app = listener.app(self.membership, table, self.refusals, limits)
        self.listening: str | None = None
        """``host:port`` the listener is bound to, None while it is off."""
        self.off_because: str | None = None if place.host is not None else place.why
        self.limits = Limits()
        self._server: uvicorn.Server | None = None
        self._connections: Connections | None = None
        self._socket: socket.socket | None = None
        self._rounds: asyncio.Task[None] | None = None

    # -- the listener and the rounds -------------------------------------------------------

    def _bind(self) -> socket.socket | None:
        host = self.place.host
        assert host is not None
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        # IPPROTO_TCP by name: asyncio turns Nagle off only on a socket that says it is TCP, and
        # with Nagle a hello waited 40 ms for a delayed ACK between its headers and its body
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if hasattr(socket, "TCP_USER_TIMEOUT"):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, USER_TIMEOUT_MS)
        try:
            sock.bind((host, self.place.port))
        except OSError as error:
            sock.close()
            self.off_because = f"cannot bind {self.place.address}: {error.strerror}"
            return None
        return sock

    async def start(self) -> None:
        """Start the exchange, bind the listener's one address (when there is one) and begin
        the rounds."""
        tls.lean_buffers()
        if self.exchange is not None:
            self.exchange.start()
        if self.place.host is None:
            return
        sock = self._bind()
        if sock is None:
            self.membership.address = None
            log.warning("rosterd: the swarm listener is off: %s", self.off_because)
            return
        config = uvicorn.Config(
            self.app,
            lifespan="off",
            log_config=None,
            access_log=False,
            proxy_headers=False,
            server_header=False,
            timeout_graceful_shutdown=GRACE,
        )
        config.load()
        server = uvicorn.Server(config)
        server.lifespan = config.lifespan_class(config)
        server.servers = []  # the connections are accepted by :class:`Connections`, not by uvicorn

        def http() -> asyncio.Protocol:
            return config.http_protocol_class(config=config, server_state=server.server_state, app_state={})  # type: ignore[call-arg]

        def member_of(der: bytes) -> str | None:
            found = self.membership.by_certificate(der)
            return found.node_id if found is not None else None

        connections = Connections(self.trust.server, http, member_of, self.limits)
        await connections.serve(sock)
        self.app.connections = connections
        self._server, self._connections, self._socket = server, connections, sock
        self.listening = self.place.address
        self._rounds = asyncio.create_task(self.rounds.every())

    async def stop(self) -> None:
        if self.exchange is not None:
            await self.exchange.stop()
        if self._rounds is not None:
            self._rounds.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._rounds
        await self.rounds.stop()
        await self.dialer.close()
        if self._connections is not None:
            self._connections.stop_accepting()  # closes the listening socket too
        if self._server is not None:
            await self._server.shutdown()  # open requests get GRACE to end
        if self._connections is not None:
            await self._connections.close()
        self._server = self._socket = self._connections = None
        self.listening = None

    def _if_revoked(self) -> None:
        """This node just learnt it was revoked: it says so once to every member it knew, then
        acts as none. Its hello carries the records that revoked it, and a member hears a
        revoked node's hello before refusing it, so a revocation of this node's revoker that it
        signed in the same moment (two members revoking each other) reaches every member, and
        each takes both: nobody keeps whichever one it happened to hear first."""
        if self._farewell is not None or self.membership.revoked is None or self.membership.address is None:
            return
        with contextlib.suppress(RuntimeError):  # no loop: a membership changed outside the daemon
            self._farewell = asyncio.get_running_loop().create_task(self._last_words())

    async def _last_words(self) -> None:
        own = self.membership.identity.node_id
        knew = [m for m in self.membership.members.values() if not m.revoked and m.node_id != own]
        said = self.membership.hello()
        await asyncio.gather(*(self.dialer.tell(member, listener.HELLO, said) for member in knew))

    def serve_clients(self, app: object, token: str) -> None:
        """Serve this node's client routes to holders of its bearer token on the swarm listener
        (``app``: its own API, marked as the loopback listener's)."""
        self.app.clients = app  # type: ignore[assignment]
        self.app.client_token = token.encode()

    def _listening(self) -> None:
        if self.listening is None:
            raise listener_off(self.off_because)

    # -- routes peers reach ----------------------------------------------------------------

    async def _hello(self, request: Request) -> JSONResponse:
        """``POST /swarm/hello``: take a member's hello, answer with this node's."""
        sender = listener.peer(request)
        said = self.membership.greeted(_document(await request.body(), MAX_SET_DOCUMENT), sender.node_id)
        self.rounds.heard(said.node_id, sender.address)
        if self.exchange is not None:
            self.exchange.heard(said.node_id)
        return Response(self.membership.hello_text(said.node_id), media_type="application/json")

    async def _join(self, request: Request) -> JSONResponse:
        """``POST /swarm/join``: admit the token's holder, tell every member, then answer it."""
        document = _document(await request.body())
        answer = self.membership.admit(document.get("token"), document.get("hello"))
        said = document["hello"]
        if self._connections is not None and isinstance(said, dict):
            self._connections.vouch(request.scope.get("client"), str(said["node_id"]))
        await self.rounds.round()
        return JSONResponse(answer)

    # -- the operator's verbs ----------------------------------------------------------------

    def invite(self, ttl_minutes: int) -> Invited:
        self._listening()
        return self.membership.invite(ttl_minutes)

    async def join(self, address: str, token: str) -> dict[str, object]:
        """Enter the swarm of the invite ``token``, admitted by the node at ``address``."""
        self._listening()
        invite = invites.read(token)
        if self.membership.state is not None:
            raise Conflict(
                f"this node is already in swarm {self.membership.state.swarm_id}: `rosterd leave` first"
            )
        certificate = await dialer.certificate_at(address)
        if not pinned(certificate, invite.admitter_public_key):
            raise PeerRefused(
                f"the node at {address} is not the one that made this invite (another key)", code="wrong_key"
            )
        body = {"token": token, "hello": self.membership.joining_hello(invite.swarm_id)}
        answer = await dialer.join(address, certificate, body, timeout=JOIN_TIMEOUT)
        if answer.status_code != 200:
            said = _document(answer.content)
            code = said.get("code")
            raise PeerRefused(
                f"{address} refused the invite: {said.get('error')}",
                code=code if isinstance(code, str) else None,
            )
        self.membership.joined(invite, _document(answer.content, MAX_SET_DOCUMENT))
        await self.rounds.round()
        return self.nodes()

    async def revoke(self, node_id: str, *, admitted: bool = False) -> dict[str, object]:
        """Revoke a member (with ``admitted``, every node it admitted too), tell every other
        member in the same round, and tell each revoked node."""
        lost = {
            found for found in self.membership.members if self.rounds.lost(found)
        }  # before it is forgotten
        revoked = self.membership.revoke(node_id, admitted=admitted)
        for member in revoked:
            await self.rounds.tell(member, wait=member.node_id not in lost)
        await self.rounds.round()
        return self.nodes()

    async def leave(self) -> dict[str, object]:
        """Revoke this node, tell every member, and forget the swarm (a revoked node just
        forgets it: no member would take its word)."""
        farewell = self.membership.leave()
        if farewell is not None:
            await self.rounds.round(farewell)
        left = self.membership.swarm.swarm_id
        self.membership.forget()
        self.rounds.contacts.clear()
        return {"left": left, **self.nodes()}

    def nodes(self) -> dict[str, object]:
        """This node, its swarm and every member with the last word from it: ``rosterd nodes``."""
        membership = self.membership
        swarm = membership.state
        links = self.exchange
        rows = []
        for member in membership.members.values():
            row = membership.describe(member)
            contact = self.rounds.contacts.get(member.node_id)
            gone = row["self"] or member.revoked or not membership.active
            row["reachable"] = None if gone else bool(contact and contact.reachable)
            answered = contact.answered_at if contact else None
            row["answered_at_ms"] = int(answered * 1000) if answered is not None else None
            row["error"] = contact.error if contact else None
            row["link_error"] = links.errors.get(member.node_id) if links is not None else None
            rows.append(row)
        gone = membership.revoked
        return {
            "node_id": membership.identity.node_id,
            "name": membership.name,
            "swarm_id": swarm.swarm_id if swarm is not None else None,
            "revoked": {"by": gone.signer, "at_ms": gone.signed_at} if gone is not None else None,
            "listen": self.listening,
            "listen_off": None if self.listening else self.off_because,
            "discovery": "tailscale" if self.use_tailscale else "static",
            "rounds": self.rounds.completed,
            "refused": dict(sorted(self.refusals.items())),
            "records_dropped": dict(sorted(membership.dropped.items())),
            "stream_refused": dict(sorted(links.refused.items())) if links is not None else {},
            "connections": self._connections.describe() if self._connections is not None else None,
            "nodes": sorted(rows, key=lambda row: (not row["self"], str(row["name"]), str(row["node_id"]))),
        }
