"""Rounds: find the peers and greet each with a signed hello, at start, every 30 s, and at once
when membership changes.

Whom a round greets: every current member at the address its record gives, and at every
``[swarm] static_peers`` entry and online Tailscale peer (at this node's swarm port) where
discovery finds it (:meth:`Dialer.identify`: whose certificate answers there; an address
where no member answers is left alone, and nothing is sent to it). Each greeting is pinned to
the member it means to reach. A member answers with its own hello, so one request carries
the news both ways, and within one round every reachable member knows every admission and
revocation either side knew. A node that learns it was revoked stops greeting anyone.

What each greeting found is kept per node (:class:`Contact`) for ``rosterd nodes``; it is a
note, not a gate: nothing waits on a peer, and a peer that did not answer is tried again next
round and never queued for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from roost.base.errors import PeerRefused, PeerUnreachable
from roost.remote.mesh import listener, tailscale
from roost.remote.mesh.dialer import Dialer
from roost.remote.mesh.membership import Membership
from roost.remote.swarm import canonical
from roost.remote.swarm.members import MAX_SET_DOCUMENT, Member

log = logging.getLogger("rosterd.swarm")

INTERVAL = 30.0
"""Seconds between rounds."""
QUIET_MIN = 300.0
"""Seconds a settled member goes ungreeted at first: one whose roster stream spoke within the
last round and that holds this node's member set has nothing to hear from a hello, so a round
skips it, but not for longer than its quiet time. Each greeting made for time alone doubles
that member's quiet time, up to :data:`QUIET_MAX`; anything else that unsettles it (a silent
stream, another member set, another address) starts it again here."""
QUIET_MAX = 3600.0
"""Seconds a settled member goes ungreeted at most. A swarm at rest so greets each member
once an hour, not once in five minutes: with a thousand members, 0.3 hellos a second each way
rather than 3.3, each a TLS handshake, a signature checked and a document each way."""


@dataclass
class Contact:
    """The last word from one peer: when it answered, or what went wrong."""

    address: str
    answered_at: float | None = None
    tried_at: float | None = None
    error: str | None = None

    @property
    def reachable(self) -> bool:
        return self.error is None and self.answered_at is not None


def addresses(
    membership: Membership, static_peers: Iterable[str], online: Iterable[str], port: int
) -> list[str]:
    """Every address discovery asks who is there: static peers and online Tailscale peers, each
    once, leaving out this node's own and every member's recorded one (greeted anyway)."""
    found = list(static_peers) + [f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}" for ip in online]
    known = {membership.address, *(m.address for m in membership.peers())}
    return [
        address
        for index, address in enumerate(found)
        if address not in known and address not in found[:index]
    ]


class Rounds:
    """Greets the swarm on a timer and on demand."""

    def __init__(
        self,
        membership: Membership,
        dialer: Dialer,
        *,
        static_peers: tuple[str, ...],
        port: int,
        clock: Callable[[], float],
        use_tailscale: bool,
        lost: Callable[[str], bool] = lambda _node_id: False,
        heard: Callable[[str], float | None] = lambda _node_id: None,
    ) -> None:
        self.membership = membership
        self.lost = lost
        """Whether a member's roster stream is known lost (or silent): a verb's round does not
        wait for its greeting, which goes on in the background."""
        self.heard_from = heard
        """When a member's roster stream last spoke (None: no stream), which is a word from it."""
        self._background: set[asyncio.Task[str | None]] = set()
        self.dialer = dialer
        self.static_peers = static_peers
        self.port = port
        self.clock = clock
        self.use_tailscale = use_tailscale
        self.contacts: dict[str, Contact] = {}
        """By node id, or by address for a target that never said who it is."""
        self._quiet: dict[str, float] = {}
        """Each settled member's quiet time, by node id, where it grew past :data:`QUIET_MIN`."""
        self.completed = 0
        self._wake = asyncio.Event()
        self._running: asyncio.Future[list[str | None]] | None = None
        self._following: asyncio.Future[list[str | None]] | None = None

    async def greet(self, member: Member, document: dict[str, object] | None = None) -> str | None:
        """Say hello to ``member`` at its address and take its hello back; its node id when it
        answered, None otherwise."""
        contact = self.contacts.setdefault(member.node_id, Contact(member.address))
        contact.tried_at = self.clock()
        try:
            answer = await self.dialer.send(
                member, "POST", listener.HELLO, document or self.membership.hello_text(member.node_id)
            )
            if answer.status_code != 200:
                raise PeerRefused(f"{member.address} answered {answer.status_code}", code="refused")
            said = self.membership.greeted(canonical.parse(answer.content, MAX_SET_DOCUMENT), member.node_id)
        except (PeerUnreachable, PeerRefused, ValueError) as error:
            contact.error = str(error) if not isinstance(error, ValueError) else "its answer is not a hello"
            return None
        self.contacts[said.node_id] = Contact(member.address, self.clock(), contact.tried_at)
        return said.node_id

    def _settled(self, member: Member) -> bool:
        """A member a round need not greet: its stream spoke within the last round, it holds this
        node's member set, and it was greeted within its quiet time (:data:`QUIET_MIN`), at the
        address its record gives (one discovery found elsewhere is always greeted). Its contact
        takes the stream's word as its answer. A settled swarm's round so costs nothing a
        member, where every hello is a signed request, a signature checked and a JSON document
        each way."""
        now = self.clock()
        spoke = self.heard_from(member.node_id)
        contact = self.contacts.get(member.node_id)
        known = self.membership.members.get(member.node_id)
        if (
            spoke is None
            or known is None
            or known.address != member.address
            or now - spoke > INTERVAL
            or contact is None
            or contact.tried_at is None
            or not self.membership.agrees(member.node_id)
        ):
            self._quiet.pop(member.node_id, None)
            return False
        quiet = self._quiet.get(member.node_id, QUIET_MIN)
        if now - contact.tried_at >= quiet:  # greeted for time alone: the next wait is longer
            self._quiet[member.node_id] = min(QUIET_MAX, 2 * quiet)
            return False
        contact.answered_at, contact.error = max(spoke, contact.answered_at or 0.0), None
        return True

    def heard(self, node_id: str, address: str) -> None:
        """A member greeted this node: that is a word from it too."""
        self.contacts[node_id] = Contact(address, self.clock(), self.clock())

    async def round(self, document: dict[str, object] | None = None) -> list[str | None]:
        """Greet every target at once; the node ids that answered (None where none did). A
        member whose roster stream is known lost is greeted too, but not waited for: a verb
        that runs a round (join, revoke, leave) returns once the reachable ones answered, so
        nothing waits on a lost peer.

        Rounds asked for while one runs share the one that starts when it ends: each caller's
        round starts after it asked (it greets with what the caller changed), and admissions
        that come together cost one greeting a member, not one each. A caller that goes away
        does not end a round others wait on. A round with a ``document`` of its own (a
        farewell) runs alone, at once."""
        if document is not None:
            return await self._round(document)
        if self._running is None or self._running.done():
            self._running = asyncio.ensure_future(self._round())
            return await asyncio.shield(self._running)
        if self._following is None:
            self._following = asyncio.ensure_future(self._after(self._running))
        return await asyncio.shield(self._following)

    async def stop(self) -> None:
        """End the shared rounds under way or waiting (their callers are gone with the node)."""
        shared = [task for task in (self._following, self._running) if task is not None]
        self._running = self._following = None
        for task in shared:
            task.cancel()
        await asyncio.gather(*shared, return_exceptions=True)

    async def _after(self, running: asyncio.Future[list[str | None]]) -> list[str | None]:
        """The round that runs once ``running`` has ended, for every caller that came meanwhile."""
        await asyncio.wait([running])
        self._running, self._following = self._following, None
        return await self._round()

    async def _round(self, document: dict[str, object] | None = None) -> list[str | None]:
        await self.dialer.prune()  # what the last greetings left open: at rest, every member's
        if not self.membership.active or self.membership.address is None:
            return []
        online = (await tailscale.status_async()).peers if self.use_tailscale else ()
        elsewhere = addresses(self.membership, self.static_peers, online, self.port)
        found = await asyncio.gather(*(self.dialer.identify(address) for address in elsewhere))
        targets = self.membership.peers()
        targets += [
            replace(member, address=address)
            for address, member in zip(elsewhere, found, strict=True)
            if member is not None and member.node_id != self.membership.identity.node_id
        ]
        waited, later = [], []
        for member in targets:
            if document is None and self._settled(member):
                continue
            greeting = asyncio.ensure_future(self.greet(member, document))
            (later if self.lost(member.node_id) else waited).append(greeting)
        for task in later:
            self._background.add(task)
            task.add_done_callback(self._background.discard)
        answered = await asyncio.gather(*waited)
        self.completed += 1
        return list(answered)

    async def tell(self, member: Member, *, wait: bool) -> None:
        """Tell a node this one just revoked: a hello whose records hold its revocation, which
        it believes since a member it knows signed it (it stops acting as a member); waited for
        only when ``wait`` (a node known lost is told in the background), its answer not read."""
        if self.membership.address is None:
            return
        told = asyncio.ensure_future(self.dialer.tell(member, listener.HELLO, self.membership.hello()))
        if wait:
            await told
            return
        self._background.add(told)  # type: ignore[arg-type]
        told.add_done_callback(self._background.discard)

    def wake(self) -> None:
        """Run a round now rather than at the next tick."""
        self._wake.set()

    async def every(self, interval: float = INTERVAL) -> None:
        """Rounds until cancelled: one at start, then every ``interval`` or when woken."""
        while True:
            self._wake.clear()
            try:
                await self.round()
            except Exception:  # a round must never end the loop: the next one tries again
                log.exception("a swarm round failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), interval)
