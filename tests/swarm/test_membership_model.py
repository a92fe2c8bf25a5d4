"""The membership merge as a property, against an adversary that signs anything with its own key.

A few honest nodes each keep their own view of the swarm and gossip every record they know;
``mallory``, a member, signs whatever it likes (introductions, records of other nodes, of
itself, revocations, dated from far in the past to minutes ahead) and hands any of it to any
node, as does a stranger with a key the swarm never admitted. Whatever the order, after every
step, on every honest node's view (``docs/swarm.md``, "The trust model"):

- an honest node's name, address and keys are only ever ones it signed itself, or its honest
  admitter signed when it introduced it (or a revocation of it);
- no revocation is undone;
- no node is there without an introduction by a member (the first node excepted), and nothing
  the stranger signed is anywhere;
- once a node knows mallory is revoked, mallory's signature changes nothing there but the one
  record the rule keeps for it: the revocation of the member that revoked it.
"""

from __future__ import annotations

import hashlib

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from roost.remote.swarm import members
from roost.remote.swarm.identity import Identity
from roost.remote.swarm.members import Member, Standing, merge
from tests.conftest import examples

NOW = 1_800_000_000.0
FOUNDER = "alpha"


def identity(name: str) -> Identity:
    return Identity.from_seed(name, hashlib.sha256(name.encode()).digest())


def signed(
    signer: Identity, about: str, key: Identity, at: float, *, revoked: bool = False, address: str = "x:1"
) -> dict[str, object]:
    return members.record(
        signer,
        node_id=about,
        name=about,
        public_key=key.public_key,
        x25519_public_key=key.x25519_public_key,
        address=address,
        now=at,
        revoked=revoked,
    )


class Swarm(RuleBasedStateMachine):
    """Honest views, the adversary's pen, and what each honest node truly said."""

    @initialize()
    def found(self) -> None:
        self.clock = NOW
        self.honest: list[str] = [FOUNDER]
        self.views: dict[str, dict[str, Standing]] = {}
        genesis = members.parse(signed(identity(FOUNDER), FOUNDER, identity(FOUNDER), NOW - 100))
        assert genesis is not None
        self.said: dict[str, list[dict[str, object]]] = {FOUNDER: [genesis.document]}
        """Every record an honest node signed of itself, or its honest admitter of it."""
        self.gossip: list[object] = [genesis.document]
        self.forged: list[object] = []
        self.views[FOUNDER] = {FOUNDER: Standing(genesis)}
        self.ever_revoked: dict[str, set[str]] = {FOUNDER: set()}
        self.raced: dict[str, set[str]] = {}
        """Per view, the nodes it first heard of from mallory's introduction: the written-down
        limit (a member racing another node's admission), left out of the first property."""
        self.fresh = 0
        self._admit(FOUNDER, "mallory", honest=False)
        for name in ("bravo", "charlie"):
            self._admit(FOUNDER, name, honest=True)

    # -- honest nodes ----------------------------------------------------------------------

    def _active(self, view: str) -> bool:
        found = self.views[view].get(view)
        return found is not None and not found.current.revoked

    def _take(self, view: str, records: list[object]) -> list[str]:
        before = self.views[view]
        merged = merge(before, records, now=self.clock)
        self._check_mallory(view, before, merged.standings, merged.changed)
        for node in set(merged.standings) - set(before):
            intro = merged.standings[node].introduction
            self.raced.setdefault(view, set()).update(
                {node} if intro and intro.signer == "mallory" else set()
            )
        self.views[view] = merged.standings
        return merged.changed

    def _admit(self, admitter: str, name: str, *, honest: bool) -> None:
        intro = signed(identity(admitter), name, identity(name), self.clock)
        self.gossip.append(intro)
        self._take(admitter, [intro])
        if honest:
            self.honest.append(name)
            self.said[name] = [intro]
            self.ever_revoked[name] = set()
            self.views[name] = dict(self.views[admitter])  # its admitter's answer, trusted
            self.raced[name] = set(self.raced.get(admitter, set()))
            own = signed(identity(name), name, identity(name), self.clock + 0.001, address=f"{name}:2")
            self.said[name].append(own)
            self.gossip.append(own)
            self._take(name, [own])

    @rule(data=st.data())
    def admit(self, data: st.DataObject) -> None:
        admitter = data.draw(st.sampled_from(self.honest))
        if not self._active(admitter) or len(self.honest) > 6:
            return
        self.fresh += 1
        self._admit(admitter, f"new{self.fresh}", honest=True)

    @rule(data=st.data(), port=st.integers(3, 9))
    def move(self, data: st.DataObject, port: int) -> None:
        name = data.draw(st.sampled_from(self.honest))
        if not self._active(name):
            return
        own = signed(identity(name), name, identity(name), self.clock, address=f"{name}:{port}")
        self.said[name].append(own)
        self.gossip.append(own)
        self._take(name, [own])

    @rule(data=st.data())
    def revoke(self, data: st.DataObject) -> None:
        revoker = data.draw(st.sampled_from(self.honest))
        target = data.draw(st.sampled_from(sorted(self.views[revoker])))
        known = self.views[revoker][target].current
        if not self._active(revoker) or target == revoker or known.revoked:
            return
        record = members.of(identity(revoker), known, now=self.clock, revoked=True)
        self.gossip.append(record)
        self._take(revoker, [record])

    @rule(data=st.data())
    def gossip_between(self, data: st.DataObject) -> None:
        source, target = data.draw(st.sampled_from(self.honest)), data.draw(st.sampled_from(self.honest))
        self._take(target, members.documents(self.views[source]))

    @rule(seconds=st.integers(0, 120))
    def tick(self, seconds: int) -> None:
        self.clock += seconds

    # -- the adversary and the stranger -----------------------------------------------------

    @rule(
        data=st.data(),
        attack=st.sampled_from(["takeover", "ahead", "reintroduce", "revoke", "introduce", "any"]),
        pen=st.sampled_from(["mallory", "mallory", "stranger"]),
    )
    def forge(self, data: st.DataObject, attack: str, pen: str) -> None:
        """A record signed with the adversary's (or the stranger's) own key, about anyone, handed
        at once to one honest node and kept for later: another's record at another address
        (``takeover``), its own record dated ahead, a revoked node introduced again, a
        revocation, a new node, or anything at all."""
        everyone = sorted({node for view in self.views.values() for node in view} - {"stranger"} | {"ghost"})
        about = data.draw(st.sampled_from(self.honest) | st.sampled_from(everyone))
        revoked, key, offset, address = False, identity(about), 1, "mallory:1"
        if attack == "ahead":
            about, key, offset = pen, identity(pen), data.draw(st.sampled_from([59, 61, 300]))
        elif attack == "revoke":
            revoked = True
        elif attack == "introduce":
            about = key_name = f"sybil{len(self.forged)}"
            key = identity(key_name)
        elif attack == "any":
            revoked = data.draw(st.booleans())
            key = data.draw(st.sampled_from([identity(about), identity("mallory"), identity("other")]))
            offset = data.draw(st.sampled_from([-3600, -61, -1, 1, 30, 59, 61, 300]))
            address = data.draw(st.sampled_from(["mallory:1", "x:1", f"{about}:2"]))
        record = signed(identity(pen), about, key, self.clock + offset, revoked=revoked, address=address)
        self.forged.append(record)
        self._take(data.draw(st.sampled_from(self.honest)), [record])

    @rule(data=st.data())
    def deliver(self, data: st.DataObject) -> None:
        """Any of what was forged (and any gossip, replayed), in any order, to any honest node."""
        target = data.draw(st.sampled_from(self.honest))
        pool = self.forged[-8:] + self.gossip[-8:]  # the newest are the likeliest to count
        if not pool:
            return
        chosen = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=6))
        self._take(target, chosen)

    # -- what must hold ----------------------------------------------------------------------

    def _check_mallory(
        self, view: str, before: dict[str, Standing], after: dict[str, Standing], changed: list[str]
    ) -> None:
        known = before.get("mallory")
        if known is None or not known.current.revoked_by_other:
            return
        for node_id in changed:
            current = after[node_id].current
            if current.signer == "mallory":
                assert current.revoked_by_other, (
                    view,
                    node_id,
                    "mallory changed a record after it was revoked",
                )
                assert known.current.signer == node_id, (view, node_id, "only its revoker, mutually")

    @invariant()
    def honest_nodes_speak_only_for_themselves(self) -> None:
        if not hasattr(self, "views"):
            return
        for view, standings in self.views.items():
            for name in self.honest:
                found = standings.get(name)
                if found is None or found.current.revoked_by_other:
                    continue
                if name in self.raced.get(view, set()):
                    continue
                assert _fields(found.current) in {_fields(members.parse(d)) for d in self.said[name]}, (
                    view,
                    name,
                )

    @invariant()
    def no_revocation_is_undone(self) -> None:
        if not hasattr(self, "views"):
            return
        for view, standings in self.views.items():
            now = {node for node, s in standings.items() if s.current.revoked_by_other}
            assert self.ever_revoked[view] <= now, (view, self.ever_revoked[view] - now)
            self.ever_revoked[view] = now

    @invariant()
    def no_node_without_an_admitter_and_nothing_of_the_strangers(self) -> None:
        if not hasattr(self, "views"):
            return
        for standings in self.views.values():
            for node, found in standings.items():
                signers = {found.current.signer} | (
                    {found.introduction.signer} if found.introduction else set()
                )
                assert "stranger" not in signers, node
                if node != FOUNDER and not found.current.revoked_by_other:
                    assert found.introduction is not None and found.introduction.signer != node, node


def _fields(member: Member | None) -> tuple[object, ...]:
    assert member is not None
    return (member.node_id, member.name, member.address, member.public_key, member.x25519_public_key)


Swarm.TestCase.settings = settings(
    max_examples=examples(100), stateful_step_count=40, deadline=None, database=None
)
test_membership_merge_against_an_adversary = Swarm.TestCase
