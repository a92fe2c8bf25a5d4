"""The pieces together, as the daemon will use them for a join: an invite, the joiner's hello,
the admitter's record and sealed key, and a third member learning of the joiner by gossip."""

from __future__ import annotations

import pytest

from roost.base.errors import PeerRefused
from roost.remote.swarm import hello, invites, members, sealing, signing, state
from roost.remote.swarm.identity import pinned
from roost.remote.swarm.members import Standing
from tests.swarm.helpers import NOW, admit, checked, node


def test_a_join_from_invite_to_gossip() -> None:
    alpha, beta, gamma = node("alpha"), node("beta"), node("gamma")
    swarm = state.create(alpha, "alpha", "100.64.0.11:8791", now=NOW)
    intro = checked(admit(alpha, gamma, NOW))
    swarm.standings = {**swarm.standings, "gamma": Standing(intro, intro)}
    token = invites.make(swarm.swarm_id, swarm.swarm_key, alpha, "100.64.0.11:8791", now=NOW)
    swarm.issued[invites.read(token).nonce] = invites.read(token).expires_at

    # the joiner: reads the invite, pins the admitter's certificate, says hello
    seen = invites.read(token)
    assert pinned(alpha.certificate(), seen.admitter_public_key)
    greeting = hello.make(
        beta,
        name="beta",
        version="0.1.0",
        swarm_id=seen.swarm_id,
        address="100.64.0.12:8791",
        capabilities=[],
        members=[],
        now=NOW + 1,
    )

    # the admitter: checks the invite (burning it), the hello, signs the record, seals the key
    invites.check(
        token,
        swarm.swarm_id,
        swarm.swarm_key,
        swarm.burnt,
        admitter="alpha",
        issued=swarm.issued,
        now=NOW + 1,
        burn=True,
    )
    said = hello.verify(greeting, swarm_id=swarm.swarm_id, members=swarm.members)
    record = members.record(
        alpha,
        node_id=said.node_id,
        name=said.name,
        public_key=said.public_key,
        x25519_public_key=said.x25519_public_key,
        address=said.address,
        now=NOW + 1,
    )
    merged = members.merge(swarm.standings, [record], now=NOW + 1)
    assert merged.changed == ["beta"]
    sealed = sealing.seal(swarm.swarm_key, said.x25519_public_key, said.node_id)
    with pytest.raises(PeerRefused) as again:
        invites.check(
            token,
            swarm.swarm_id,
            swarm.swarm_key,
            swarm.burnt,
            admitter="alpha",
            issued=swarm.issued,
            now=NOW + 2,
            burn=True,
        )
    assert again.value.code == "used"

    # the joiner opens the key and signs a request that gamma, told by gossip, accepts
    key = sealing.open_sealed(sealed, beta)
    assert key == swarm.swarm_key
    gammas = members.merge(
        {"alpha": merged.standings["alpha"]}, members.documents(merged.standings), now=NOW + 2
    ).members
    assert sorted(gammas) == ["alpha", "beta", "gamma"]
    head = signing.sign(beta, key, "GET", "/swarm/snapshot?since=0", b"", to="gamma", now=NOW + 2)
    sender = signing.verify_request(
        "GET",
        "/swarm/snapshot?since=0",
        head,
        b"",
        members=gammas,
        swarm_key=swarm.swarm_key,
        recipient="gamma",
        nonces=signing.Nonces(),
        now=NOW + 2,
    )
    assert sender.node_id == "beta"
