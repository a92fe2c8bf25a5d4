"""Nodes and swarms for the swarm's unit tests: identities from fixed seeds, a clock by hand."""

from __future__ import annotations

import hashlib

from roost.remote.swarm import members
from roost.remote.swarm.identity import Identity
from roost.remote.swarm.members import Member, Standing

NOW = 1_800_000_000.0
SWARM_ID = "0123456789abcdef0123456789abcdef"
SWARM_KEY = bytes(range(32))


def node(name: str) -> Identity:
    """The same identity for the same name in every test: id ``name``, seed from its hash."""
    return Identity.from_seed(name, hashlib.sha256(name.encode()).digest())


def admit(
    admitter: Identity, joiner: Identity, now: float = NOW, *, revoked: bool = False
) -> dict[str, object]:
    """``admitter``'s record of ``joiner``, at ``now``."""
    return members.record(
        admitter,
        node_id=joiner.node_id,
        name=joiner.node_id,
        public_key=joiner.public_key,
        x25519_public_key=joiner.x25519_public_key,
        address=f"{joiner.node_id}.tailnet:8791",
        now=now,
        revoked=revoked,
    )


def checked(document: dict[str, object]) -> Member:
    member = members.parse(document)
    assert member is not None
    return member


def founded(*names: str) -> dict[str, Standing]:
    """A swarm its first node made (self-signed) and admitted every other node into."""
    first = node(names[0])
    known = {
        first.node_id: Standing(
            checked(members.own_record(first, first.node_id, "first.tailnet:8791", NOW - 100))
        )
    }
    for name in names[1:]:
        intro = checked(admit(first, node(name), NOW - 50))
        known[name] = Standing(intro, intro)
    return known


def current(standings: dict[str, Standing]) -> dict[str, Member]:
    """Each node's record as it counts now."""
    return members.current(standings)
