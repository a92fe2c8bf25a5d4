"""This node's place in the swarm: ``swarm.json`` and every change to it, in one object.

The daemon is the only writer of ``swarm.json``; every verb that changes membership (invite,
admit, join, revoke, leave, a hello that brings news) goes through :class:`Membership`, which
saves the file and tells its listeners (the TLS trust, the rounds) in the same step. What a
peer sends is checked by :mod:`roost.remote.swarm` before a field of it is used; this module decides
what to do with what passed.
"""

from __future__ import annotations

import contextlib
import logging
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from roost.base.errors import Conflict, PeerRefused, TargetGone
from roost.remote.swarm import canonical, hello, invites, members, sealing, signing, state
from roost.remote.swarm.fields import b64
from roost.remote.swarm.hello import Hello
from roost.remote.swarm.identity import Identity
from roost.remote.swarm.members import Member, Standing
from roost.remote.swarm.state import SwarmState

log = logging.getLogger("rosterd.swarm")

CAPABILITIES: tuple[str, ...] = ()
"""What this node serves to peers beyond the hello; later features add their names here."""
KEPT_SETS = 64
"""Member sets this node remembers having held: a peer that says it holds one of them is sent
only the records that changed since, rather than every record."""
HELLO_REUSE_S = 1.0
"""Seconds a signed hello is sent again as it is, to every member that lacks the same records:
a round greets every member, and at a thousand members signing and encoding one hello each
was most of an admission's cost. A hello names no recipient and its time orders nothing."""


class NotInSwarm(Conflict):
    """This node belongs to no swarm: ``rosterd invite`` makes one, ``rosterd join`` enters one."""


class Revoked(Conflict):
    """Another member revoked this node: it is no member any more, and acts as none."""


class ListenerOff(Conflict):
    """The swarm listener is off, so no peer could reach this node: it cannot admit or join."""


def listener_off(why: str | None) -> ListenerOff:
    return ListenerOff(
        f"the swarm listener is off ({why}): a node joins or admits only where its peers can "
        "reach it; see `rosterd doctor`"
    )


@dataclass(frozen=True)
class Invited:
    token: str
    swarm_id: str
    expires_at: int
    created: bool
    """Whether this invite made the swarm (the first one does)."""
    address: str
    """The admitter's swarm listener, ``host:port``: what the joiner gives ``rosterd join``."""


class Membership:
    """``swarm.json`` in memory, and the only code that changes it."""

    def __init__(
        self,
        directory: Path,
        identity: Identity,
        *,
        name: str,
        address: str | None,
        version: str,
        clock: Callable[[], float],
    ) -> None:
        self.directory = directory
        self.identity = identity
        self.name = name
        self.address = address
        """``host:port`` of this node's swarm listener; None when it is off."""
        self.version = version
        self.clock = clock
        self.nonces = signing.Nonces()
        self.dropped: Counter[str] = Counter()
        """Member records a peer sent that the rule dropped, by why (``rosterd nodes``)."""
        self.listeners: list[Callable[[], None]] = []
        self.state: SwarmState | None = state.load(directory)
        self._certified: dict[bytes, Member] = {}
        self.digest: str | None = None
        """The member set this node holds (:func:`roost.remote.swarm.members.digest`)."""
        self._sets: OrderedDict[str, dict[str, str]] = OrderedDict()
        """The last :data:`KEPT_SETS` member sets held, by digest (each node's records' hash)."""
        self._told: dict[str, str] = {}
        """The member set each peer last said it holds, by node id."""
        self._hellos: dict[tuple[str | None, ...], tuple[float, bytes]] = {}
        """Hellos made lately, as canonical bytes, by what they carry (:meth:`hello_text`)."""
        self._index()
        self._pin_own()

    # -- what is known -------------------------------------------------------------------

    @property
    def swarm(self) -> SwarmState:
        if self.state is None:
            raise NotInSwarm(
                "this node is in no swarm: `rosterd invite` makes one, `rosterd join` enters one"
            )
        return self.state

    @property
    def members(self) -> Mapping[str, Member]:
        """Each node's record as it counts now (revoked and left nodes too, marked)."""
        return self.state.members if self.state is not None else {}

    @property
    def standings(self) -> Mapping[str, Standing]:
        return self.state.standings if self.state is not None else {}

    @property
    def revoked(self) -> Member | None:
        """The revocation another member signed of this node, once it has heard of it: from then
        on it acts as no member (no rounds, no streams, nothing served or forwarded)."""
        own = self.members.get(self.identity.node_id)
        return own if own is not None and own.revoked_by_other else None

    @property
    def active(self) -> bool:
        """In a swarm, and not revoked from it."""
        return self.state is not None and self.revoked is None

    def peers(self) -> list[Member]:
        """Every current member but this node: whom a round greets (none once this node is revoked)."""
        if not self.active:
            return []
        return [m for m in self.members.values() if not m.revoked and m.node_id != self.identity.node_id]

    def pinned(self) -> dict[str, bytes]:
        """Each current member's certificate by node id: whom the dialer may reach, each at its own."""
        return {m.node_id: m.certificate for m in self.peers() if m.certificate is not None}

    def certificates(self) -> list[bytes]:
        """Every certificate the listener takes at the handshake: each node's the swarm knows,
        revoked ones too (the door tells a revoked node so, and lets it do nothing else)."""
        return [m.certificate for m in self.members.values() if m.certificate is not None]

    def by_certificate(self, der: bytes) -> Member | None:
        """The node whose certificate this is (the TLS handshake proved its key), if any."""
        return self._certified.get(der)

    def _changed(self) -> None:
        state.save(self.directory, self.swarm, now=self.clock())
        self._index()
        for listener in self.listeners:
            listener()

    def _index(self) -> None:
        self._certified = {m.certificate: m for m in self.members.values() if m.certificate is not None}
        if self.state is None:
            self.digest = None
            self._sets.clear()
            self._told.clear()
            return
        hashes = members.held(self.standings)
        self.digest = members.digest(hashes)
        self._sets[self.digest] = hashes
        self._sets.move_to_end(self.digest)
        while len(self._sets) > KEPT_SETS:
            self._sets.popitem(last=False)

    def agrees(self, node_id: str) -> bool:
        """Whether member ``node_id`` last said it holds the member set this node holds."""
        return self.digest is not None and self._told.get(node_id) == self.digest

    def records_for(self, node_id: str | None) -> list[dict[str, object]]:
        """The member records a hello to ``node_id`` carries: none when it said it holds the set
        this node holds, what changed since when it holds one this node held, else every one
        (a node never heard from, one that says nothing of its set, one that holds records this
        node never had). So a round in a settled swarm carries no records, and an admission
        carries the new node's alone, however many members there are."""
        lacks = self._lacks(node_id)
        if lacks == "":
            return []
        if lacks is None or self.digest is None:
            return members.documents(self.standings)
        return members.changed_since(self.standings, self._sets[lacks], self._sets[self.digest])

    def _lacks(self, node_id: str | None) -> str | None:
        """What a hello to ``node_id`` carries, named: ``""`` nothing (it holds this node's
        set), the digest of a set this node held and it holds (what changed since), None every
        record."""
        if node_id is None:
            return None
        if self.agrees(node_id):
            return ""
        have = self._told.get(node_id)
        return have if have is not None and have in self._sets and self.digest is not None else None

    def _merge(self, records: list[object]) -> list[str]:
        merged = members.merge(self.swarm.standings, records, now=self.clock())
        for node_id, why in merged.dropped:
            self.dropped[why] += 1
            log.info("a member record of %s was dropped (%s)", node_id, why)
        if merged.changed:
            self.swarm.standings = merged.standings
            self._changed()
        return merged.changed

    def _pin_own(self) -> None:
        """Sign a new record of this node when its name (config's ``[node] name``) or its
        listener's address is not the one the swarm knows, or when the record it counts by is
        still its admitter's introduction: the id stays, the rest follows, and from then on
        only this node's own records can change it."""
        own = self.members.get(self.identity.node_id)
        if own is None or own.revoked or self.address is None:
            return
        now = self.clock()
        if (own.name, own.address, own.certificate, own.signer) != (
            self.name,
            self.address,
            self.identity.certificate(),
            self.identity.node_id,
        ):
            # newer than the record it replaces, even when that one's signer's clock ran ahead
            at = max(now, own.signed_at / 1000 + 0.001)
            self._merge([members.own_record(self.identity, self.name, self.address, at)])

    def _address(self) -> str:
        if self.address is None:
            raise listener_off("see `rosterd doctor`")
        return self.address

    # -- requests between nodes ----------------------------------------------------------

    def sign(self, method: str, target: str, body: bytes, to: str) -> dict[str, str]:
        """The headers that make a request this node's, for member ``to`` only."""
        return signing.sign(
            self.identity, self.swarm.swarm_key, method, target, body, to=to, now=self.clock()
        )

    def claimed(
        self, method: str, target: str, headers: Mapping[str, str], *, revoked: bool = False
    ) -> signing.Claimed:
        """What a request's headers claim, before its body is read; :class:`PeerRefused` when
        they claim nothing this node takes (:func:`roost.remote.swarm.signing.claimed`; ``revoked``
        lets a revoked sender's claim through, for its last word)."""
        if not self.active or self.state is None:
            raise PeerRefused("this node is no member of a swarm", code="unknown_node")
        return signing.claimed(
            method,
            target,
            headers,
            members=self.state.members,
            swarm_key=self.state.swarm_key,
            recipient=self.identity.node_id,
            now=self.clock(),
            revoked=revoked,
        )

    def proven(self, claim: signing.Claimed, body: bytes) -> Member:
        """The member that signed this request, its signature over ``body`` checked."""
        return signing.proven(claim, body, nonces=self.nonces, now=self.clock())

    def hello_text(self, to: str) -> bytes:
        """:meth:`hello` to member ``to`` as canonical bytes, made once for every member that
        lacks the same records (the same set said held, or none known) within
        :data:`HELLO_REUSE_S`."""
        key = (self._lacks(to), self.digest, self.swarm.swarm_id, self._address(), self.name)
        now = self.clock()
        made = self._hellos.get(key)
        if made is not None and 0 <= now - made[0] < HELLO_REUSE_S:
            return made[1]
        text = canonical.encode(self.hello(to))
        self._hellos = {k: v for k, v in self._hellos.items() if 0 <= now - v[0] < HELLO_REUSE_S}
        self._hellos[key] = (now, text)
        return text

    def hello(self, to: str | None = None) -> dict[str, object]:
        """This node's signed hello: to member ``to``, carrying what it lacks
        (:meth:`records_for`); to nobody in particular, every member record this node knows."""
        records = self.records_for(to) if to is not None else members.documents(self.standings)
        return self._greeting(self.swarm.swarm_id, self._address(), records, digest=self.digest)

    def _greeting(
        self, swarm_id: str, address: str, records: list[dict[str, object]], digest: str | None = None
    ) -> dict[str, object]:
        return hello.make(
            self.identity,
            name=self.name,
            version=self.version,
            swarm_id=swarm_id,
            address=address,
            capabilities=list(CAPABILITIES),
            members=records,
            now=self.clock(),
            digest=digest,
        )

    def greeted(self, document: object, sender: str) -> Hello:
        """Take a peer's hello: it must be ``sender``'s (the member that signed the request that
        carried it, or that answered at the handshake), and the records it carries are merged
        by the rule."""
        said = hello.verify(document, swarm_id=self.swarm.swarm_id, members=self.members)
        if said.node_id != sender:
            raise PeerRefused("the hello is not its sender's", code="wrong_key")
        members.member(self.members, said.node_id)
        self._merge(said.members)
        if said.digest is None:
            self._told.pop(said.node_id, None)
        else:
            self._told[said.node_id] = said.digest
        return said

    def last_word(self, document: object, sender: str) -> None:
        """A revoked member's hello, its signature checked: its records are merged by the rule
        like anyone's, which takes from a revoked signer one record only, the revocation of the
        member that revoked it. Without this, two members revoking each other at once could
        each be shut out of the other's door before its own revocation got through, and the
        swarm would keep whichever one a third node heard from first."""
        said = document.get("members") if isinstance(document, dict) else None
        if isinstance(said, list) and isinstance(document, dict) and document.get("node_id") == sender:
            self._merge(said[: 4 * members.MAX_MEMBERS])

    def told(self, records: object) -> Member | None:
        """A member's door refused this node and sent the records of its revocation: merge them
        by the rule (they count only when a member this node knows signed them); the revocation
        of this node, when that is what they are."""
        if self.state is not None and isinstance(records, list):
            self._merge(records[: 2 * members.MAX_MEMBERS])
        return self.revoked

    def revocation(self, node_id: str) -> list[dict[str, object]]:
        """What a revoked node is told at the door: the record of its revocation, with the
        revoker's own current record (so a node that knows the revoker can check it)."""
        found = self.standings.get(node_id)
        if found is None or not found.current.revoked_by_other:
            return []
        revoker = self.standings.get(found.current.signer)
        told = [found.current.document]
        return told + (revoker.documents() if revoker is not None else [])

    # -- operator verbs ------------------------------------------------------------------

    def invite(self, ttl_minutes: int) -> Invited:
        """A single-use token; the first invite makes the swarm, with this node its first member."""
        address = self._address()
        created = self.state is None
        if created:
            self.state = state.create(self.identity, self.name, address, now=self.clock())
        self._acting()
        token = invites.make(
            self.swarm.swarm_id,
            self.swarm.swarm_key,
            self.identity,
            address,
            now=self.clock(),
            ttl_minutes=ttl_minutes,
        )
        made = invites.read(token)
        self.swarm.issued[made.nonce] = made.expires_at
        self._changed()
        return Invited(token, self.swarm.swarm_id, made.expires_at, created, address)

    def admit(self, token: object, document: object) -> dict[str, object]:
        """The admitter's side of a join: the token must be one this node made for this swarm,
        unused and unexpired, and the hello the joiner's own; then the token is burnt, the
        joiner's introduction signed and the swarm key sealed to it. Nothing changes when any
        check fails."""
        swarm = self.swarm
        now = self.clock()
        self._acting()
        self._token(token, now)
        said = hello.verify(document, swarm_id=swarm.swarm_id, members=swarm.members)
        if said.certificate is None:
            raise PeerRefused("the joiner's hello carries no certificate", code="malformed")
        if said.node_id == self.identity.node_id:
            raise PeerRefused("a node cannot admit itself", code="malformed")
        if self._admitted(said):  # its answer was lost on the way: the same answer again
            self._token(token, now, burn=True)
            state.save(self.directory, swarm, now=now)  # the burn outlives a restart
            return self._admission(said)
        record = members.record(
            self.identity,
            node_id=said.node_id,
            name=said.name,
            public_key=said.public_key,
            x25519_public_key=said.x25519_public_key,
            address=said.address,
            now=now,
            certificate=said.certificate,
        )
        merged = members.merge(swarm.standings, [record], now=now)
        if said.node_id not in merged.changed:
            reasons = ", ".join(reason for _, reason in merged.dropped) or "same"
            code = "revoked" if "revoked" in reasons else "malformed"
            raise PeerRefused(f"the joiner's record was not taken ({reasons})", code=code)
        self._token(token, now, burn=True)
        swarm.standings = merged.standings
        self._changed()
        return self._admission(said)

    def _admitted(self, said: Hello) -> bool:
        """Whether the joiner is a member already, with the keys and certificate it joins with:
        a join whose answer never reached it (a cut, a timeout), tried again with a new invite.
        Its record stands; only its own signature may change it from here on."""
        held = self.swarm.members.get(said.node_id)
        return (
            held is not None
            and not held.revoked
            and (held.public_key, held.x25519_public_key, held.certificate)
            == (said.public_key, said.x25519_public_key, said.certificate)
        )

    def _token(self, token: object, now: float, *, burn: bool = False) -> None:
        """Check an invite this node made for its swarm, burning it when ``burn``: checked
        first, burnt only once every other check of the join has passed."""
        swarm = self.swarm
        invites.check(
            token,
            swarm.swarm_id,
            swarm.swarm_key,
            swarm.burnt,
            admitter=self.identity.node_id,
            issued=swarm.issued,
            now=now,
            burn=burn,
        )

    def _admission(self, said: Hello) -> dict[str, object]:
        """A join's answer: the swarm key sealed to the joiner, and every member record."""
        swarm = self.swarm
        return {
            "swarm_id": swarm.swarm_id,
            "sealed_key": sealing.seal(swarm.swarm_key, said.x25519_public_key, said.node_id),
            "members": members.documents(swarm.standings),
            "hello": self.hello(),
        }

    def joining_hello(self, swarm_id: str) -> dict[str, object]:
        """The hello a joiner sends with its token, before it is a member of anything."""
        return self._greeting(swarm_id, self._address(), [])

    def joined(self, invite: invites.Invite, answer: object) -> list[Member]:
        """The joiner's side: open the sealed key, take the admitter's member list (it came over
        a connection pinned to the key the invite names), check that it holds this node's record
        signed by the admitter, and write ``swarm.json``. Returns the members to greet."""
        if self.state is not None:  # an invite made while the join was on its way
            raise Conflict(f"this node is already in swarm {self.state.swarm_id}: `rosterd leave` first")
        if not isinstance(answer, dict):
            raise PeerRefused("the admitter's answer is not a join", code="malformed")
        if answer.get("swarm_id") != invite.swarm_id:
            raise PeerRefused("the admitter answered for another swarm", code="other_swarm")
        key = sealing.open_sealed(answer.get("sealed_key"), self.identity)
        records = answer.get("members")
        known = members.standings(records) if isinstance(records, list) else None
        if known is None or len(records) > 2 * members.MAX_MEMBERS:  # type: ignore[arg-type]
            raise PeerRefused("the admitter's member list is not one roost sends", code="malformed")
        admitter, own = known.get(invite.admitter), known.get(self.identity.node_id)
        if admitter is None or admitter.current.public_key != invite.admitter_public_key:
            raise PeerRefused("the member list does not hold the admitter's key", code="wrong_key")
        if (
            own is None
            or own.current.revoked
            or own.current.signer != invite.admitter
            or own.current.public_key != self.identity.public_key
        ):
            raise PeerRefused("the member list does not admit this node", code="malformed")
        if not members.merge({invite.admitter: admitter}, [own.current.document], now=self.clock()).changed:
            raise PeerRefused("this node's record is not signed by the admitter", code="bad_signature")
        self.state = SwarmState(invite.swarm_id, key, known, {})
        self._changed()
        self._pin_own()  # from now on this node's record is its own, and only it can change it
        return self.peers()

    def revoke(self, node_id: str, *, admitted: bool = False) -> list[Member]:
        """Sign the revocation of another member, final (it travels in the next hellos); with
        ``admitted``, of every node it admitted too, and every node those admitted. Returns
        the members revoked now."""
        if node_id == self.identity.node_id:
            raise Conflict("a node does not revoke itself: `rosterd leave` takes it out of the swarm")
        self._acting()
        standings = self.swarm.standings
        if node_id not in standings:
            raise TargetGone(f"no member {node_id} in this swarm (see `rosterd nodes`)")
        chosen = [node_id]
        while admitted and (
            more := [
                other
                for other, standing in standings.items()
                if standing.admitted_by in chosen and other not in chosen and other != self.identity.node_id
            ]
        ):
            chosen += more
        now = self.clock()
        records = [
            members.of(self.identity, standings[chosen_id].current, now=now, revoked=True)
            for chosen_id in chosen
            if not standings[chosen_id].current.revoked_by_other
        ]
        changed = self._merge(records)
        return [self.swarm.members[chosen_id] for chosen_id in changed]

    def _acting(self) -> None:
        """Refuse a verb a revoked node may not do any more."""
        gone = self.revoked
        if gone is not None:
            raise Revoked(
                f"this node was revoked from swarm {self.swarm.swarm_id} by {self.name_of(gone.signer)}: "
                "it is no member any more; `rosterd leave` forgets the swarm"
            )

    def name_of(self, node_id: str) -> str:
        found = self.members.get(node_id)
        return f"{found.name} ({node_id})" if found is not None else node_id

    def leave(self) -> dict[str, object] | None:
        """Revoke this node itself; returns the farewell hello (carrying that revocation) for the
        caller to send before :meth:`forget`, or None for a node already revoked (nobody would
        take its farewell)."""
        if self.revoked is not None:
            return None
        own = self.swarm.members.get(self.identity.node_id)
        address = own.address if own is not None else self._address()
        self._merge([members.own_record(self.identity, self.name, address, self.clock(), revoked=True)])
        return self._greeting(self.swarm.swarm_id, address, members.documents(self.standings))

    def forget(self) -> None:
        """Delete ``swarm.json``: this node belongs to no swarm any more."""
        with contextlib.suppress(FileNotFoundError):
            (self.directory / state.FILE).unlink()
        self.state = None
        self.nonces = signing.Nonces()
        self._index()
        for listener in self.listeners:
            listener()

    def describe(self, member: Member) -> dict[str, object]:
        """A member as ``rosterd nodes --json`` shows it."""
        own = member.node_id == self.identity.node_id
        standing = self.standings.get(member.node_id)
        admitter = standing.admitted_by if standing is not None else None
        admitter_record = self.members.get(admitter) if admitter is not None else None
        return {
            "node_id": member.node_id,
            "name": member.name,
            "address": member.address,
            "self": own,
            "revoked": member.revoked,
            "left": member.left,
            "revoked_by": member.signer if member.revoked_by_other else None,
            "admitted_by": admitter,
            "admitted_by_revoked": bool(admitter_record is not None and admitter_record.revoked_by_other),
            "signer": member.signer,
            "signed_at_ms": member.signed_at,
            "public_key": b64(member.public_key),
        }
