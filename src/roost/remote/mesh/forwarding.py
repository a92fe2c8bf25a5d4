"""Sending an act to the node that owns its session: :class:`roost.actions.remote.Forwarder`
on the wire.

One signed ``POST /swarm/act`` to the owner's listener, on a connection of its own (a pulled
cable shows in the connect, within the dialer's timeout, instead of in a long read), answered
as the owner answered. Nothing is queued or retried: an owner that does not answer, or that no
longer takes this node as a member (its door's 401), is ``PeerUnreachable`` at once. An owner
whose roster stream this node already lost (the union shows it ``unreachable``) is not even
dialled: the refusal comes at once, with how long it has been gone, instead of after the
dialer's connect timeout spent on a cable that is known to be out.

What goes on the wire is :data:`ACT`'s document (``docs/swarm.md``, "Proxied actions"); what
comes back is the owner's status and JSON body, which this node checks is a JSON object of
bounded size before any face passes it on.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from roost.actions.remote import UNREACHABLE, Act, Reply
from roost.base.errors import PeerUnreachable
from roost.remote.mesh.dialer import Dialer
from roost.remote.mesh.membership import Membership
from roost.remote.swarm.members import Member
from roost.remote.swarm.peers import Peers

ACT = "/swarm/act"
HANDOFF = "/swarm/handoff"
HANDOFF_S = 120.0
"""Seconds a target may take to take a session in: its files written, its adapter started and
the session loaded (a long history replays before ``session/load`` answers)."""
READ_S = 60.0
"""Seconds an owner may take to answer an act that waits on nothing (a suspended headless
session resumes before its prompt is sent); an act that waits is given its wait on top."""
MAX_ANSWER = 8 * 1024 * 1024
"""Bytes of an owner's answer this node reads: a record and its fields, with room to spare."""
WAIT_LIMIT_MS = 24 * 3600 * 1000
QUIET_S = 6.0
"""Seconds of silence from a peer's roster stream (a keep-alive every 4 s) after which an act
for it is refused without dialling."""
ANSWERED = (200, 201)
"""The success statuses a session route answers; with the failures (4xx, 5xx), all an owner may
give back: a 204 or a redirect with a body would not even be HTTP once passed on."""


def document(act: Act) -> dict[str, object]:
    """``act`` as the owner reads it (integers only: the swarm's JSON has no floats)."""
    return {
        "session": act.session,
        "face": act.face,
        "verb": act.verb,
        "body": act.body,
        "by": act.by,
        "via": act.via,
        "wait_ms": min(WAIT_LIMIT_MS, max(0, round(act.wait_s * 1000))),
    }


class Forwarding:
    """The members this node may forward to, and the one request that forwards."""

    def __init__(
        self, membership: Membership, dialer: Dialer, peers: Peers, clock: Callable[[], float]
    ) -> None:
        self.membership = membership
        self.dialer = dialer
        self.peers = peers
        self.clock = clock

    def member(self, node: str) -> str | None:
        found = self.named(node)
        if len(found) != 1 or found[0] == self.membership.identity.node_id:
            return None
        return found[0]

    def named(self, node: str) -> list[str]:
        members = self.membership.members
        exact = members.get(node)
        if exact is not None:
            return [] if exact.revoked else [exact.node_id]
        return sorted(m.node_id for m in members.values() if m.name == node and not m.revoked)

    def name(self, node_id: str) -> str:
        found = self.membership.members.get(node_id)
        return found.name if found is not None else node_id

    def _reachable(self, node_id: str) -> Member:
        """The member to dial; :class:`PeerUnreachable` at once, without dialling, when it is no
        member, when its roster stream is known lost, or when that stream has been silent past
        :data:`QUIET_S` (it sends a keep-alive every few seconds, so a silent one is a cut cable
        that the stream's read timeout has not yet called)."""
        member = self.membership.members.get(node_id)
        if member is None or member.revoked:
            raise PeerUnreachable(f"node {node_id} is no member of this node's swarm", code=UNREACHABLE)
        known = self.peers.get(node_id)
        if known is not None:
            silent_ms = known.age_ms(self.clock())
            if not known.reachable or silent_ms > QUIET_S * 1000:
                lost = "unreachable" if not known.reachable else "silent"
                raise PeerUnreachable(
                    f"{member.name} ({member.address}) did not answer: {lost} for {silent_ms // 1000} s, "
                    "so nothing was sent",
                    code=UNREACHABLE,
                    address=member.address,
                )
        return member

    async def forward(self, node_id: str, act: Act) -> Reply:
        member = self._reachable(node_id)
        status, body = await self.dialer.once(
            member, "POST", ACT, document(act), read_s=READ_S + act.wait_s, limit=MAX_ANSWER
        )
        if status == 401:
            raise PeerUnreachable(
                f"{member.name} ({member.address}) refused this node's request: it no longer takes "
                "this node as a member",
                code=UNREACHABLE,
                address=member.address,
            )
        if not (status in ANSWERED or 400 <= status <= 599) or not _an_object(body):
            raise PeerUnreachable(
                f"{member.name} ({member.address}) answered with something roost does not send",
                code=UNREACHABLE,
                address=member.address,
            )
        return Reply(status, body)

    async def hand(self, node_id: str, bundle: dict[str, object]) -> Reply:
        """Send a handoff's bundle to ``node_id`` once (:mod:`roost.remote.mesh.handoffs`): its answer
        as it gave it; PeerUnreachable when it does not answer (within :data:`HANDOFF_S`)."""
        member = self._reachable(node_id)
        status, body = await self.dialer.once(
            member, "POST", HANDOFF, bundle, read_s=HANDOFF_S, limit=MAX_ANSWER
        )
        if not (status in ANSWERED or 400 <= status <= 599) or not _an_object(body):
            raise PeerUnreachable(
                f"{member.name} ({member.address}) answered with something roost does not send",
                code=UNREACHABLE,
                address=member.address,
            )
        return Reply(status, body)


def _an_object(body: bytes) -> bool:
    try:
        return isinstance(json.loads(body), dict)
    except ValueError:
        return False
