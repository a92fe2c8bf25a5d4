"""This node's place in the swarm: ``swarm.json`` and every change to it, in one object.

The daemon is the only writer of ``swarm.json``; every verb that changes membership (invite,
admit, join, revoke, leave, a hello that brings news) goes through :class:`Membership`, which
saves the file and tells its listeners (the TLS trust, the rounds) in the same step. What a
peer sends is checked by :mod:`roost.swarm` before a field of it is used; this module decides
what to do with what passed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from roost.errors import Conflict, PeerRefused, TargetGone
from roost.swarm import hello, invites, members, sealing, signing, state
from roost.swarm.hello import Hello
from roost.swarm.identity import Identity, b64
from roost.swarm.members import Member
from roost.swarm.state import SwarmState

CAPABILITIES: tuple[str, ...] = ()
"""What this node serves to peers beyond the hello; later features add their names here."""


class NotInSwarm(Conflict):
    """This node belongs to no swarm: ``rosterd invite`` makes one, ``rosterd join`` enters one."""


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
        self.listeners: list[Callable[[], None]] = []
        self.state: SwarmState | None = state.load(directory)
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
        return self.state.members if self.state is not None else {}

    def peers(self) -> list[Member]:
        """Every current member but this node: whom a round greets."""
        return [m for m in self.members.values() if not m.revoked and m.node_id != self.identity.node_id]

    def certificates(self) -> list[bytes]:
        """The certificates TLS pins: every current member's, this node's too."""
        return [m.certificate for m in self.members.values() if not m.revoked and m.certificate is not None]

    def _changed(self) -> None:
        state.save(self.directory, self.swarm, now=self.clock())
        for listener in self.listeners:
            listener()

    def _merge(self, records: list[object]) -> list[str]:
        merged = members.merge(self.swarm.members, records, now=self.clock())
        if merged.changed:
            self.swarm.members = merged.members
            self._changed()
        return merged.changed

    def _pin_own(self) -> None:
        """Sign a new record of this node when its name (config's ``[node] name``) or its
        listener's address is not the one the swarm knows: the id stays, the rest follows."""
        own = self.members.get(self.identity.node_id)
        if own is None or own.revoked or self.address is None:
            return
        if (own.name, own.address, own.certificate) != (self.name, self.address, self.identity.certificate()):
            self._merge([members.own_record(self.identity, self.name, self.address, self.clock())])

    def _address(self) -> str:
        if self.address is None:
            raise listener_off("see `rosterd doctor`")
        return self.address

    # -- requests between nodes ----------------------------------------------------------

    def sign(self, method: str, target: str, body: bytes) -> dict[str, str]:
        """The headers that make a request this node's."""
        return signing.sign(self.identity, self.swarm.swarm_key, method, target, body, now=self.clock())

    def verify(self, method: str, target: str, headers: Mapping[str, str], body: bytes) -> Member:
        """The member that signed this request; :class:`PeerRefused` otherwise."""
        if self.state is None:
            raise PeerRefused("this node is in no swarm", code="unknown_node")
        return signing.verify_request(
            method,
            target,
            headers,
            body,
            members=self.state.members,
            swarm_key=self.state.swarm_key,
            nonces=self.nonces,
            now=self.clock(),
        )

    def hello(self) -> dict[str, object]:
        """This node's signed hello, carrying every member record it knows."""
        return self._greeting(self.swarm.swarm_id, self._address(), gossip=True)

    def _greeting(self, swarm_id: str, address: str, *, gossip: bool) -> dict[str, object]:
        """A hello of this node's, with every member record it knows when it ``gossip``s."""
        return hello.make(
            self.identity,
            name=self.name,
            version=self.version,
            swarm_id=swarm_id,
            address=address,
            capabilities=list(CAPABILITIES),
            members=[m.document for m in self.members.values()] if gossip else [],
            now=self.clock(),
        )

    def greeted(self, document: object, sender: str | None = None) -> Hello:
        """Take a peer's hello: it must be a current member's (``sender``'s, when a signed
        request carried it), and the records it carries are merged by the rule."""
        said = hello.verify(document, swarm_id=self.swarm.swarm_id, members=self.members)
        if sender is not None and said.node_id != sender:
            raise PeerRefused("the hello is not its sender's", code="wrong_key")
        members.member(self.members, said.node_id)
        self._merge(said.members)
        return said

    # -- operator verbs ------------------------------------------------------------------

    def invite(self, ttl_minutes: int) -> Invited:
        """A single-use token; the first invite makes the swarm, with this node its first member."""
        address = self._address()
        created = self.state is None
        if created:
            self.state = state.create(self.identity, self.name, address, now=self.clock())
        token = invites.make(
            self.swarm.swarm_id,
            self.swarm.swarm_key,
            self.identity,
            address,
            now=self.clock(),
            ttl_minutes=ttl_minutes,
        )
        if created:
            self._changed()
        return Invited(token, self.swarm.swarm_id, invites.read(token).expires_at, created)

    def admit(self, token: object, document: object) -> dict[str, object]:
        """The admitter's side of a join: the token must be this swarm's, unused and unexpired,
        and the hello the joiner's own; then the token is burnt, the joiner's record signed and
        the swarm key sealed to it. Nothing changes when any check fails."""
        swarm = self.swarm
        now = self.clock()
        invites.check(token, swarm.swarm_id, swarm.swarm_key, swarm.burnt, now=now)
        said = hello.verify(document, swarm_id=swarm.swarm_id, members=swarm.members)
        if said.certificate is None:
            raise PeerRefused("the joiner's hello carries no certificate", code="malformed")
        if said.node_id == self.identity.node_id:
            raise PeerRefused("a node cannot admit itself", code="malformed")
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
        merged = members.merge(swarm.members, [record], now=now)
        if said.node_id not in merged.changed:
            reasons = ", ".join(reason for _, reason in merged.dropped) or "same"
            raise PeerRefused(f"the joiner's record was not taken ({reasons})", code="malformed")
        invites.check(token, swarm.swarm_id, swarm.swarm_key, swarm.burnt, now=now, burn=True)
        swarm.members = merged.members
        self._changed()
        return {
            "swarm_id": swarm.swarm_id,
            "sealed_key": sealing.seal(swarm.swarm_key, said.x25519_public_key, said.node_id),
            "members": [m.document for m in swarm.members.values()],
            "hello": self.hello(),
        }

    def joining_hello(self, swarm_id: str) -> dict[str, object]:
        """The hello a joiner sends with its token, before it is a member of anything."""
        return self._greeting(swarm_id, self._address(), gossip=False)

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
        parsed = [members.parse(r) for r in records] if isinstance(records, list) else [None]
        known = {m.node_id: m for m in parsed if m is not None}
        if None in parsed or len(known) != len(parsed):
            raise PeerRefused("the admitter's member list is not one roost sends", code="malformed")
        admitter, own = known.get(invite.admitter), known.get(self.identity.node_id)
        if admitter is None or admitter.public_key != invite.admitter_public_key:
            raise PeerRefused("the member list does not hold the admitter's key", code="wrong_key")
        if (
            own is None
            or own.revoked
            or own.signer != invite.admitter
            or own.public_key != self.identity.public_key
        ):
            raise PeerRefused("the member list does not admit this node", code="malformed")
        if not members.merge({admitter.node_id: admitter}, [own.document], now=self.clock()).changed:
            raise PeerRefused("this node's record is not signed by the admitter", code="bad_signature")
        self.state = SwarmState(invite.swarm_id, key, known, {})
        self._changed()
        return self.peers()

    def revoke(self, node_id: str) -> Member:
        """Sign the revocation of another member; it travels in the next hellos."""
        if node_id == self.identity.node_id:
            raise Conflict("a node does not revoke itself: `rosterd leave` takes it out of the swarm")
        found = self.swarm.members.get(node_id)
        if found is None:
            raise TargetGone(f"no member {node_id} in this swarm (see `rosterd nodes`)")
        if found.revoked:
            return found
        record = members.record(
            self.identity,
            node_id=found.node_id,
            name=found.name,
            public_key=found.public_key,
            x25519_public_key=found.x25519_public_key,
            address=found.address,
            # newer than the record it replaces even when that one's clock ran ahead of ours
            now=max(self.clock(), found.signed_at / 1000 + 0.001),
            revoked=True,
            certificate=found.certificate,
        )
        self._merge([record])
        return self.swarm.members[node_id]

    def leave(self) -> dict[str, object]:
        """Revoke this node itself; returns the farewell hello (carrying that revocation) for the
        caller to send before :meth:`forget`."""
        own = self.swarm.members.get(self.identity.node_id)
        address = own.address if own is not None else self._address()
        self._merge([members.own_record(self.identity, self.name, address, self.clock(), revoked=True)])
        return self._greeting(self.swarm.swarm_id, address, gossip=True)

    def forget(self) -> None:
        """Delete ``swarm.json``: this node belongs to no swarm any more."""
        with contextlib.suppress(FileNotFoundError):
            (self.directory / state.FILE).unlink()
        self.state = None
        self.nonces = signing.Nonces()
        for listener in self.listeners:
            listener()

    def describe(self, member: Member) -> dict[str, object]:
        """A member as ``rosterd nodes --json`` shows it."""
        own = member.node_id == self.identity.node_id
        return {
            "node_id": member.node_id,
            "name": member.name,
            "address": member.address,
            "self": own,
            "revoked": member.revoked,
            "signer": member.signer,
            "signed_at_ms": member.signed_at,
            "public_key": b64(member.public_key),
        }
