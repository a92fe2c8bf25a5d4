"""A proxied act on the wire, both ways: sending one to the node that owns its session, and
taking one in as that owner (``POST /swarm/act``).

**Out** (:class:`Forwarding`, the :class:`roost.actions.remote.Forwarder` the daemon hands to
the actions). One signed ``POST /swarm/act`` to the owner's listener, on a connection of its
own (a pulled cable shows in the connect, within the dialer's timeout, instead of in a long
read), answered as the owner answered. Nothing is queued or retried: an owner that does not
answer, or that no longer takes this node as a member (its door's 401), is ``PeerUnreachable``
at once. An owner whose roster stream this node already lost (the union shows it
``unreachable``) is not even dialled: the refusal comes at once, with how long it has been
gone. What goes on the wire is :data:`ACT`'s document (``docs/swarm.md``, "Proxied actions");
what comes back is the owner's status and JSON body, checked to be a JSON object of bounded
size before any face passes it on.

**In.** The route sits behind the signed door, so its sender is a current member
(``request.state.peer``); everything else in the request is that member's word and checked
here before anything acts on it: the document's shape, field by field, and that the session it
names is this node's. A session key with another node's prefix is refused (``not_owner``, 409):
an owner acts on its own sessions and never forwards an act a second time, so a confused or
hostile member cannot make two nodes bounce a prompt between them. The act is then done by the
face it was asked in (``faces``, handed in by the daemon: the API runs its own route for the
verb, the MCP server its own tool), with this node's rules, fences and validation exactly as
for a caller of its own; the answer goes back as that face gave it. Every act that named one of
this node's sessions (or started one) is journalled with who asked, from where, and through
which node (``acted``); one that only reads is not.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from roost.actions.remote import FACES, READS, Act, Dispatch, Reply, Through, refuse_elsewhere
from roost.actions.sessions import resolve
from roost.base.errors import PEER_UNREACHABLE, PeerUnreachable, RoostError, Unavailable, UsageError
from roost.remote.mesh import listener
from roost.remote.mesh.dialer import Dialer
from roost.remote.mesh.membership import Membership
from roost.remote.swarm import canonical, fields
from roost.remote.swarm.members import Member
from roost.remote.swarm.peers import Peers
from roost.truth.roster import Roster

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
            raise PeerUnreachable(f"node {node_id} is no member of this node's swarm", code=PEER_UNREACHABLE)
        known = self.peers.get(node_id)
        if known is not None:
            silent_ms = known.age_ms(self.clock())
            if not known.reachable or silent_ms > QUIET_S * 1000:
                lost = "unreachable" if not known.reachable else "silent"
                raise PeerUnreachable(
                    f"{member.name} ({member.address}) did not answer: {lost} for {silent_ms // 1000} s, "
                    "so nothing was sent",
                    code=PEER_UNREACHABLE,
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
                code=PEER_UNREACHABLE,
                address=member.address,
            )
        if not (status in ANSWERED or 400 <= status <= 599) or not _an_object(body):
            raise PeerUnreachable(
                f"{member.name} ({member.address}) answered with something roost does not send",
                code=PEER_UNREACHABLE,
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
                code=PEER_UNREACHABLE,
                address=member.address,
            )
        return Reply(status, body)


def _an_object(body: bytes) -> bool:
    try:
        return isinstance(json.loads(body), dict)
    except ValueError:
        return False


log = logging.getLogger("rosterd.swarm")

Acted = Callable[[str, Act, Through, int], None]

"""Told of every act done for another node: the session's key, the act, who, the status."""

MAX_SESSION = 1024

MAX_VERB = 32

MAX_BY = 120

VIA = ("api", "cli", "mcp", "web")

VERB_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz._")


def read(document: object) -> Act:
    """The act a member sent, checked field by field; UsageError (400) naming the first field
    that is not what roost sends."""
    if not isinstance(document, Mapping):
        raise UsageError("an act is a JSON object", field="act")
    wanted = {"session", "face", "verb", "body", "by", "via", "wait_ms"}
    if set(document) != wanted:
        raise UsageError(f"an act holds exactly {', '.join(sorted(wanted))}", field="act")
    session = document["session"]
    if session is not None and fields.text(session, MAX_SESSION) is None:
        raise UsageError(f"session is null or one line of at most {MAX_SESSION} characters", field="session")
    face, verb, via = document["face"], document["verb"], document["via"]
    if face not in FACES:
        raise UsageError(f"face is one of {', '.join(FACES)}", field="face")
    if not isinstance(verb, str) or not 0 < len(verb) <= MAX_VERB or not set(verb) <= VERB_CHARACTERS:
        raise UsageError("verb is a word of a-z, '.' and '_'", field="verb")
    body = document["body"]
    if not isinstance(body, str) or len(body) > canonical.MAX_DOCUMENT:
        raise UsageError("body is the JSON text the caller sent", field="body")
    by = fields.text(document["by"], MAX_BY)
    if by is None:
        raise UsageError(f"by is one line of at most {MAX_BY} characters", field="by")
    if via not in VIA:
        raise UsageError(f"via is one of {', '.join(VIA)}", field="via")
    wait_ms = fields.integer(document["wait_ms"], 0, WAIT_LIMIT_MS)
    if wait_ms is None:
        raise UsageError("wait_ms is an integer of milliseconds", field="wait_ms")
    return Act(session, face, verb, body, by, via, wait_ms / 1000)


class Acting:
    """The owner's side of a proxied act: this node's roster, the faces that act, and the
    journal's ear. The daemon makes it before the faces exist (the swarm listener's routes are
    fixed when the mesh is made, and the faces are made around a door that needs the mesh),
    and fills ``faces`` once they do; an act that comes before is refused as a busy node's."""

    def __init__(self, roster: Roster, acted: Acted | None = None) -> None:
        self.roster = roster
        self.faces: dict[str, Dispatch] = {}
        self.acted = acted

    def route(self) -> Route:
        return listener.route(ACT, self.act)

    async def act(self, request: Request) -> Response:
        sender = listener.peer(request)
        try:
            document = canonical.parse(await request.body())
        except ValueError:
            raise UsageError("the body is not JSON roost sends", field="act") from None
        act = read(document)
        refuse_elsewhere(act.session, self.roster.node_id)
        through = Through(sender.node_id, sender.name, act.by, act.via)
        face = self.faces.get(act.face)
        if face is None:
            raise Unavailable("this node is still starting", code="starting")
        reply = await face(act, through, request)
        key = self._key(act, reply)
        if key is not None and self.acted is not None and act.verb not in READS:
            self.acted(key, act, through, reply.status)
        log.info("act %s %s from %s: %d", act.face, act.verb, sender.name, reply.status)
        return Response(reply.body, reply.status, media_type="application/json")

    def _key(self, act: Act, reply: Reply) -> str | None:
        """The key of the session the act was about: the one it named, or the one it started."""
        if act.session is not None:
            try:
                return resolve(self.roster, act.session)
            except RoostError:
                return None
        try:
            record = json.loads(reply.body).get("record")
        except (ValueError, AttributeError):
            return None
        key = record.get("session_key") if isinstance(record, dict) else None
        return key if isinstance(key, str) else None
