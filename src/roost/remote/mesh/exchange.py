"""The exchange: one signed stream per peer carrying that peer's own roster, both ways.

Every node serves ``GET /swarm/roster`` behind the signed door, and dials it on every other
member. The stream is server-sent events:

- ``frame``: the sender's whole roster (its ``GET /snapshot`` document), first on every
  connection, and again whenever the sender's change queue for this peer overflowed;
- ``change``: one change of the sender's roster as its ``/changes`` stream carries it;
- ``terminals``: the sender's terminal list, every pane of its tmux server as its own
  ``GET /terminals`` lists them (less session keys and states, which its roster says), after
  the first frame and again whenever its tmux server's panes, windows or sessions change; a
  plain shell is in no roster, and this is how another node's page learns of it;
- a ``: keepalive`` comment every :data:`KEEPALIVE` seconds, on one beat for every served
  stream, from each with nothing else to send at that moment.

Frames at the start and changes after, because a change is a few hundred bytes where a frame
of fifty sessions is tens of kilobytes (``bench/swarm.py`` measures both), and a whole frame
on every change would cost a swarm of ten that times nine on every claim; the frame on
connect is what lets a fresh frame replace a stale one after a partition.

Who sent what is the transport's word, never the document's: the link is to one member's
address, and the certificate that answered must be that member's own. Every frame and every
change goes through :class:`~roost.remote.swarm.peers.Peers`, which checks each record as a claim is
checked and drops (and counts) what fails. A link with nothing on it for :data:`SILENCE`
seconds is gone: the peer is marked ``unreachable`` and served from its last frame, and the
link is tried again after a bounded, jittered backoff. The serving side sends keep-alives
and its listener's sockets give up on a silent client the same way (``TCP_USER_TIMEOUT``, see
:mod:`roost.remote.mesh.node`). A revocation or a departure ends both directions at once
(``Membership.listeners``) and drops the peer's records.

What changed on a peer is named here, by comparing the record kept with the one that
replaced it, and appended to :class:`~roost.remote.swarm.feed.Feed`, the swarm's change stream,
with this node's own changes. Nothing here waits on a peer: each link is a task of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable

import httpx
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from roost.base import sse
from roost.base.errors import PeerRefused, PeerUnreachable, RoostError, Unavailable
from roost.pane.tmux.topology import Topology
from roost.remote.mesh import events, listener, tls
from roost.remote.mesh.dialer import Dialer
from roost.remote.mesh.membership import Membership
from roost.remote.swarm import union
from roost.remote.swarm.feed import NODE, NODE_LEFT, TERMINALS, Feed
from roost.remote.swarm.members import Member
from roost.remote.swarm.peers import LOCAL, REACHABLE, Pane, Peers
from roost.truth.roster import records
from roost.truth.roster.changes import SESSION_ENDED, Change, transitions
from roost.truth.roster.live import Live, Stream

log = logging.getLogger("rosterd.swarm")

ROSTER = "/swarm/roster"
FRAME, CHANGE = "frame", "change"
GATHER = 0.1
"""Seconds a terminal list waits for the rest of a burst of tmux notices (a command starting
renames its window, a split moves panes): one list per burst, as the web page reads one."""
KEEPALIVE = 4.0
"""Seconds between keep-alives on a quiet stream."""
SILENCE = 10.0
"""Seconds of nothing from a peer before its link counts as gone: two and a half missed
keep-alives, so a peer that vanishes is ``unreachable`` within 15 s of its last word."""
CONNECT = 3.0
"""Seconds to open a link; a peer behind a pulled cable is found out by this."""
BACKOFF_FIRST, BACKOFF_CAP = 0.5, 5.0
"""Seconds before the first retry of a link and at most between retries: a peer back on the
network is linked again within 15 s (the cap, jitter, a connect) and never hammered."""
EXPIRE_EVERY = 60.0
"""Seconds between sweeps that drop peers unheard for a day (``Peers.expire``)."""
LINGER_EVERY = 5.0
"""Seconds between sweeps that drop peers' sessions ended long enough ago (``Peers.linger``):
an ended session leaves the union within this of when its owner drops it."""
MAX_EVENT = 32 << 20
"""Bytes one event may hold: a frame of the most records :class:`Peers` keeps, with room."""


def backoff(attempt: int, rand: Callable[[], float] = random.random) -> float:
    """Seconds to wait before retry ``attempt`` (0 first): doubling to the cap, ±20 % jitter so
    a swarm that lost a node does not call it back in step."""
    return min(BACKOFF_CAP, BACKOFF_FIRST * 2**attempt) * (0.8 + 0.4 * rand())


def _certificate(response: httpx.Response) -> bytes | None:
    """The certificate the answering node presented (DER), from the connection itself."""
    stream = response.extensions.get("network_stream")
    ssl_object = stream.get_extra_info("ssl_object") if stream is not None else None
    der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
    return bytes(der) if der else None


def _dumps(document: object) -> str:
    return json.dumps(document, separators=(",", ":"))


def _encoded(batch: tuple[Change, ...]) -> bytes:
    """A batch of this node's changes as events of its stream (a keep-alive when empty)."""
    out = b""
    for change in batch:
        if change.snapshot is not None:
            out += sse.encode(FRAME, _dumps(change.snapshot)).encode()
        elif change.record is not None:
            out += sse.encode(CHANGE, _dumps(change.to_json())).encode()
    return out or sse.KEEPALIVE.encode()


async def _in_pieces(frames: AsyncGenerator[bytes, None]) -> AsyncIterator[bytes]:
    """``frames`` cut in :func:`tls.pieces`: a frame of a peer's sessions written whole would grow
    the connection's outgoing TLS buffer to its size for the stream's life."""
    try:
        async for frame in frames:
            for piece in tls.pieces(frame):
                yield piece
    finally:
        await frames.aclose()


class PeerStream(StreamingResponse):
    """The served stream, written to TLS a piece at a time; ``done`` runs however the
    connection ends."""

    def __init__(self, frames: AsyncGenerator[bytes, None], done: Callable[[], None]) -> None:
        super().__init__(
            _in_pieces(frames), media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
        )
        self._done = done

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._done()


class Exchange:
    """Serves this node's roster to members and follows each member's, into ``peers``."""

    def __init__(
        self,
        membership: Membership,
        dialer: Dialer,
        peers: Peers,
        live: Live,
        clock: Callable[[], float],
        *,
        keepalive: float = KEEPALIVE,
        silence: float = SILENCE,
    ) -> None:
        self.membership = membership
        self.dialer = dialer
        self.peers = peers
        self.live = live
        self.clock = clock
        self.keepalive = keepalive
        self.timeout = httpx.Timeout(CONNECT, read=silence)
        roster = live.roster
        self.feed = Feed(roster.node_id, roster.node, self._view, clock, epoch=roster.status_epoch + 1)
        self.links: dict[str, asyncio.Task[None]] = {}
        self.served: dict[str, Stream] = {}
        self.refused: Counter[str] = Counter()
        """Events refused from peers, by why (a record refused alone is counted per peer)."""
        self.errors: dict[str, str] = {}
        """Why each link last ended, by node id."""
        self.listeners: list[Callable[[records.Record], None]] = []
        """Told of every peer record that changed, as kept (the daemon's notifier, which pushes
        for another node's sessions as for this node's)."""
        self.nodes: list[Callable[[str, bool], None]] = []
        """Told of each peer whose frame was kept (True: heard whole, as after a link comes up)
        and of each that left the union (False): the daemon's budgets, which count peers' spend."""
        self._tasks: list[asyncio.Task[None]] = []
        self._running = False
        self._numbered: dict[str, records.Record] | None = None
        """This node's records as the feed took them from its roster's stream, once following."""
        self._listing: tuple[Callable[[], Awaitable[list[Pane]]], Topology] | None = None
        self.terminals: tuple[Pane, ...] | None = None
        """This node's panes as last listed for its peers (None before the first list)."""
        self._nudged: dict[str, asyncio.Event] = {}
        """Set by a member's hello (:meth:`heard`) while its link waits out a backoff."""

    def share_terminals(self, listed: Callable[[], Awaitable[list[Pane]]], topology: Topology) -> None:
        """Tell every peer this node's terminals (``listed``, from tmux), now and whenever
        ``topology`` moves; called before :meth:`start`."""
        self._listing = (listed, topology)

    def route(self) -> Route:
        return listener.route(ROSTER, self._serve, method="GET")

    def _view(self) -> union.View:
        """The union as the feed has numbered it: this node's records as of the last of its
        changes the feed took (the roster may be a change ahead, not yet read from its stream),
        so a union taken at change ``seq`` holds nothing a later change will announce."""
        roster = self.live.roster
        local = roster.records()
        if self._numbered is not None:
            present = {record.session_key for record in local}
            for gone in self._numbered.keys() - present:  # dropped by the roster after its linger
                del self._numbered[gone]
            local = [
                self._numbered[record.session_key] for record in local if record.session_key in self._numbered
            ]
        return union.capture(roster.node, roster.node_id, local, self.peers, self.clock(), self.terminals)

    # -- the life of the exchange --------------------------------------------------------

    def start(self) -> None:
        """Follow this node's changes into the feed, sweep old peers, and link every member."""
        self._running = True
        stream = self.live.subscribe(replay=False, own=True)
        self._numbered = {record.session_key: record for record in self.live.roster.records()}
        self._tasks = [
            asyncio.create_task(self._follow_local(stream)),
            asyncio.create_task(self._sweep()),
            asyncio.create_task(self._beat()),
        ]
        if self._listing is not None:
            self._tasks.append(asyncio.create_task(self._follow_terminals(*self._listing)))
        self.sync()

    async def stop(self) -> None:
        self._running = False
        tasks = [*self._tasks, *self.links.values()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks, self.links = [], {}
        for stream in self.served.values():
            stream.close()
        self.served.clear()
        self.feed.close()

    def sync(self) -> None:
        """Membership changed: end both directions with every node no longer a member (its
        records leave the union at once), and link every member not linked yet."""
        current = {member.node_id for member in self.membership.peers()}
        for node_id in [node_id for node_id in self.links if node_id not in current]:
            self.links.pop(node_id).cancel()
        for node_id in [node_id for node_id in self.served if node_id not in current]:
            self.served.pop(node_id).close()
        for peer in self.peers.all():
            if peer.node_id not in current and self.peers.forget(peer.node_id):
                why = {"reason": self._why_gone(peer.node_id)}
                self.feed.append(NODE_LEFT, peer.node_id, peer.node, detail=why)
                self._tell_node(peer.node_id, False)
            elif (member := self.membership.members.get(peer.node_id)) and self.peers.rename(
                peer.node_id, member.name
            ):
                row = union.node_row(peer, self.clock())
                self.feed.append(NODE, peer.node_id, member.name, detail=row)
        if self._running:
            for node_id in current - self.links.keys():
                self.links[node_id] = asyncio.create_task(self._link(node_id))

    def _why_gone(self, node_id: str) -> str:
        member = self.membership.members.get(node_id)
        if self.membership.revoked is not None:
            return "this_node_revoked"
        if member is None or member.signer == member.node_id:
            return "left"
        return "revoked"

    async def _follow_local(self, stream: Stream) -> None:
        """This node's own changes into the swarm feed, as its roster named them."""
        roster = self.live.roster
        with stream:
            while (batch := await stream.next(None)) is not None:
                for change in batch:
                    if change.record is not None:
                        self._numbered[change.record.session_key] = change.record
                        record = union.served(change.record, LOCAL, 0)
                        self.feed.append(change.event, roster.node_id, roster.node, record=record)
                    elif change.snapshot is not None:  # fell a ring behind: the roster as it is
                        self._numbered = {record.session_key: record for record in roster.records()}

    async def _follow_terminals(
        self, listed: Callable[[], Awaitable[list[Pane]]], topology: Topology
    ) -> None:
        """This node's terminal list, listed once per burst of tmux changes (not once per
        peer), into the feed and every served stream when it changed."""
        watch = topology.watch()
        while True:
            try:
                found = tuple(await listed())
            except RoostError as error:  # tmux did not answer: the list stays as it was
                log.info("this node's terminals could not be listed for its peers: %s", error)
            else:
                if found != self.terminals:
                    self.terminals = found
                    roster = self.live.roster
                    self.feed.append(
                        TERMINALS, roster.node_id, roster.node, detail={"terminals": list(found)}
                    )
                    for served in self.served.values():
                        served.poke()  # each stream sends the new list at its next turn
            seen = watch.seen
            while (version := await watch.next(self.keepalive, GATHER)) == seen:
                pass
            if version is None:
                return

    async def _beat(self) -> None:
        """Every ``keepalive`` seconds, wake every served stream: one with nothing to send
        sends a keep-alive. One timer for all of them, where a timeout on each stream's every
        read cost a task and a timer per member per beat, most of an idle node's work at a
        thousand members (``bench/swarm_scale.py``)."""
        while True:
            await asyncio.sleep(self.keepalive)
            for served in self.served.values():
                served.poke()

    async def _sweep(self) -> None:
        expired = self.clock()
        while True:
            await asyncio.sleep(LINGER_EVERY)
            self.peers.linger(self.clock())
            if self.clock() - expired >= EXPIRE_EVERY:
                expired = self.clock()
                self.expire()

    def expire(self) -> list[str]:
        """Drop the peers unheard for a day; the node ids dropped."""
        names = {peer.node_id: peer.node for peer in self.peers.all()}
        gone = self.peers.expire(self.clock())
        for node_id in gone:
            self.feed.append(NODE_LEFT, node_id, names[node_id], detail={"reason": "expired"})
            self._tell_node(node_id, False)
        return gone

    # -- serving this node's roster -----------------------------------------------------------

    async def _serve(self, request: Request) -> PeerStream:
        """``GET /swarm/roster``: this node's roster to the member that signed the request. A
        second stream to the same member replaces the first; a stopping node serves none (its
        listener is waiting for open requests to end)."""
        member = listener.peer(request)
        if not self._running:
            raise Unavailable("this node is stopping")
        earlier = self.served.pop(member.node_id, None)
        if earlier is not None:
            earlier.close()
        stream = self.live.subscribe(replay=False, own=True)
        self.served[member.node_id] = stream

        def done() -> None:
            stream.__exit__()
            if self.served.get(member.node_id) is stream:
                del self.served[member.node_id]

        return PeerStream(self._frames(stream), done)

    async def _frames(self, stream: Stream) -> AsyncIterator[bytes]:
        """The frame, then each change as it comes and this node's terminal list whenever it
        moves (the newest only: a list is whole). The stream is woken by a change, by a new
        list (:meth:`_follow_terminals`) and by the beat (:meth:`_beat`); a wake with no
        change and no new list is a keep-alive."""
        yield sse.encode(FRAME, _dumps(self.live.roster.snapshot())).encode()
        told: tuple[Pane, ...] | None = None
        while True:
            if self.terminals is not None and self.terminals is not told:
                told = self.terminals
                yield sse.encode(TERMINALS, _dumps({"terminals": list(told)})).encode()
            batch = await stream.next(None)
            if batch is None:
                return
            if batch or self.terminals is told:
                yield _encoded(batch)

    # -- following a peer's roster -----------------------------------------------------------

    def heard(self, node_id: str) -> None:
        """A hello from member ``node_id``: a link to it that failed since its last stream is
        tried again now, not after its backoff. A joiner refuses the admitter's first dial (the
        swarm key that signs it comes in the join's answer) and greets every member as soon as
        it has joined; a node back from a partition greets before the backoff would end."""
        if (nudge := self._nudged.get(node_id)) is not None:
            nudge.set()

    async def _link(self, node_id: str) -> None:
        """Follow ``node_id``'s stream for as long as it is a member, reconnecting with backoff."""
        attempt = 0
        nudge = self._nudged[node_id] = asyncio.Event()
        try:
            while (member := self.membership.members.get(node_id)) is not None and not member.revoked:
                if await self._follow(member):
                    attempt = 0
                    nudge.clear()  # a hello while the stream was live says nothing of its end
                self._lost(node_id)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(nudge.wait(), backoff(attempt))
                nudge.clear()
                attempt += 1
        finally:
            if self._nudged.get(node_id) is nudge:
                del self._nudged[node_id]

    async def _follow(self, member: Member) -> bool:
        """One connection to ``member``'s stream, until it ends; whether a frame came on it."""
        framed = False
        try:
            async with self.dialer.stream(member, ROSTER, self.timeout) as response:
                if response.status_code != 200:
                    raise PeerRefused(f"{member.address} answered {response.status_code}", code="refused")
                if member.certificate is None or _certificate(response) != member.certificate:
                    raise PeerRefused(f"another node answered at {member.address}", code="wrong_node")
                async for event, data in events.read(response.aiter_bytes(), MAX_EVENT):
                    framed = self.take(member.node_id, event, data) or framed
            self.errors[member.node_id] = "the stream ended"
        except (PeerUnreachable, PeerRefused, sse.TooLarge) as error:
            self.errors[member.node_id] = str(error)
        return framed

    def take(self, node_id: str, event: str, data: str) -> bool:
        """One event from ``node_id``'s stream; whether it was a frame this node kept."""
        now = self.clock()
        if event == events.KEEPALIVE:
            self.peers.heard(node_id, now)
            return False
        if event not in (FRAME, CHANGE, TERMINALS):
            return False  # a newer peer's event this node does not know
        try:
            document = json.loads(data)
        except (ValueError, RecursionError):
            self.refused["not_json"] += 1
            return False
        if event == FRAME:
            return self._frame(node_id, document, now)
        if event == TERMINALS:
            self._terminals(node_id, document, now)
        else:
            self._change(node_id, document, now)
        return False

    def _terminals(self, node_id: str, document: object, now: float) -> None:
        try:
            changed = self.peers.terminals(node_id, document, now)
        except PeerRefused:
            self.refused["terminals"] += 1
            return
        peer = self.peers.get(node_id)
        if changed and peer is not None and peer.terminals is not None:
            self.feed.append(TERMINALS, node_id, peer.node, detail={"terminals": list(peer.terminals)})

    def _frame(self, node_id: str, document: object, now: float) -> bool:
        before = self.peers.get(node_id)
        old = dict(before.records) if before is not None else {}
        was = before.state() if before is not None else None
        try:
            member = self.membership.members.get(node_id)
            peer = self.peers.frame(node_id, document, now, member.name if member is not None else None)
        except PeerRefused:
            self.refused["frame"] += 1
            return False
        if was != REACHABLE:
            self.feed.append(NODE, node_id, peer.node, detail=union.node_row(peer, now))
        for key, record in peer.records.items():
            named = transitions(old.get(key), record)
            for name in named:
                self.feed.append(name, node_id, peer.node, record=union.served(record, REACHABLE, 0))
            if named:
                self._tell(record)
        for key, kept in old.items():
            if key not in peer.records and kept.liveness != records.ENDED:
                self._vanished(node_id, peer.node, kept, now)
        self._tell_node(node_id, True)
        return True

    def _vanished(self, node_id: str, name: str, kept: records.Record, now: float) -> None:
        """A live session of ``node_id`` that its fresh frame no longer holds: its owner ended
        and dropped it while the link was down, or restarted without it. The stream said
        nothing of it, so say it ended (why is not known: ``ended_reason`` null), or a client
        following the swarm's changes would hold it live for ever."""
        gone = kept.replace(liveness=records.ENDED, ended_at=now, ended_reason=None)
        self.feed.append(SESSION_ENDED, node_id, name, record=union.served(gone, REACHABLE, 0))
        self._tell(gone)

    def _change(self, node_id: str, document: object, now: float) -> None:
        peer = self.peers.get(node_id)
        said = document.get("record") if isinstance(document, dict) else None
        key = said.get("session_key") if isinstance(said, dict) else None
        if peer is None or not isinstance(key, str):
            self.refused["change"] += 1
            return
        old = peer.records.get(key)
        kept = self.peers.change(node_id, said, now)
        if kept is None or kept is old:
            return
        for name in transitions(old, kept):
            self.feed.append(name, node_id, peer.node, record=union.served(kept, REACHABLE, 0))
        self._tell(kept)

    def _tell(self, record: records.Record) -> None:
        for tell in self.listeners:
            tell(record)

    def _tell_node(self, node_id: str, heard: bool) -> None:
        for tell in self.nodes:
            tell(node_id, heard)

    def _lost(self, node_id: str) -> None:
        peer = self.peers.get(node_id)
        if peer is not None and peer.reachable:
            log.info("the roster stream of %s (%s) is gone: %s", peer.node, node_id, self.errors.get(node_id))
            self.peers.lost(node_id)
            self.feed.append(NODE, node_id, peer.node, detail=union.node_row(peer, self.clock()))
