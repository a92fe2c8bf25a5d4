"""The swarm feed's cursor: ``EPOCH:SEQ`` of this node's own numbering, replayed when it can be
and answered with a snapshot when it cannot (another node's or run's cursor, one too old)."""

from __future__ import annotations

import asyncio
from typing import Any

from roost.swarm.feed import NODE, Feed, SwarmChange

OWN = "aaaaaaaaaaaaaaaa"


def feed(ring: int = 8, backlog: int = 8) -> Feed:
    def union(epoch: int, seq: int) -> dict[str, Any]:
        return {"status_epoch": epoch, "seq": seq, "records": []}

    return Feed(OWN, "desk", union, lambda: 1_796_000_000.0, ring=ring, backlog=backlog)


def first(found: Feed, seq: int | None, epoch: int | None) -> tuple[SwarmChange, ...]:
    with found.subscribe(seq, epoch) as subscription:
        batch = asyncio.run(subscription.next(0))
    assert batch is not None
    return batch


def fill(found: Feed, count: int) -> None:
    for n in range(count):
        found.append(NODE, "b" * 16, f"n{n}", detail={"peer_state": "reachable"})


def test_a_cursor_of_this_feed_replays_what_followed_it() -> None:
    found = feed()
    fill(found, 5)
    replay = first(found, 3, found.epoch)
    assert [(c.seq, c.ident) for c in replay] == [(4, f"{found.epoch}:4"), (5, f"{found.epoch}:5")]
    assert first(found, 5, None) == ()  # at the head: nothing to replay, no snapshot either


def test_a_cursor_it_cannot_replay_is_answered_with_a_snapshot() -> None:
    found = feed(ring=4)
    fill(found, 10)
    for seq, epoch, why in [
        (None, None, "no cursor"),
        (2, found.epoch, "older than the ring"),
        (3, found.epoch + 1, "another run's or another node's epoch"),
        (11, found.epoch, "ahead of this feed"),
    ]:
        (snapshot,) = first(found, seq, epoch)
        assert snapshot.event == "snapshot", why
        assert snapshot.snapshot == {"status_epoch": found.epoch, "seq": 10, "records": []}
        assert snapshot.ident == f"{found.epoch}:10"


def test_a_change_carries_its_node_and_a_slow_subscriber_starts_over_from_a_snapshot() -> None:
    found = feed(backlog=3)
    subscription = found.subscribe(0, found.epoch)
    fill(found, 4)
    batch = asyncio.run(subscription.next(0))
    assert batch is not None and [c.event for c in batch] == ["snapshot"]
    found.append(NODE, "b" * 16, "laptop", detail={"peer_state": "unreachable", "peer_age_ms": 12})
    (change,) = asyncio.run(subscription.next(0)) or ()
    assert change.to_json() | {"at": None} == {
        "seq": 5,
        "event": "node",
        "at": None,
        "status_epoch": found.epoch,
        "node": "laptop",
        "node_id": "b" * 16,
        "peer_state": "unreachable",
        "peer_age_ms": 12,
    }
    found.close()
    assert asyncio.run(subscription.next(0)) is None
