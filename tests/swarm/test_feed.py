"""The swarm feed's cursor: ``EPOCH:SEQ`` of this node's own numbering, replayed when it can be
and answered with a snapshot when it cannot (another node's or run's cursor, one too old); and
its whole frames, one per change, each the union as that change left it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from roost.remote.swarm.feed import NODE, Feed, Frame, SwarmChange
from roost.remote.swarm.peers import Peers
from roost.remote.swarm.union import Texts, View, Whole, capture
from roost.truth.roster import records
from tests.swarm import test_peers as peer_docs

OWN = "aaaaaaaaaaaaaaaa"
NOW = 1_796_000_000.0


def feed(ring: int = 8, backlog: int = 8, frames: int = 8, local: list[records.Record] | None = None) -> Feed:
    """A feed whose union is this node's ``local`` records as they are when it is taken."""
    held = [] if local is None else local

    def view() -> View:
        return View("desk", OWN, NOW, tuple(held), ())

    return Feed(OWN, "desk", view, lambda: NOW, ring=ring, backlog=backlog, frames=frames)


def session(pid: int) -> records.Record:
    return records.Record("desk", OWN, f"{OWN}:{pid}:1", pid, 1, NOW)


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
        assert snapshot.snapshot is not None
        whole = {name: snapshot.snapshot[name] for name in ("status_epoch", "seq", "records")}
        assert whole == {"status_epoch": found.epoch, "seq": 10, "records": []}
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


def read(framer: Any) -> tuple[Frame, ...]:
    batch = asyncio.run(framer.next(0))
    assert batch is not None
    return batch


def test_a_burst_of_changes_is_as_many_whole_frames_each_the_union_that_change_left() -> None:
    """The specification's /swarm/events: one full snapshot per change anywhere, however fast
    they come (before, 14 changes in a burst gave the client fewer frames, all alike)."""
    local: list[records.Record] = []
    found = feed(frames=64, local=local)
    framer = found.frames()
    (first,) = read(framer)
    assert (first.seq, first.document(found.epoch)["records"]) == (0, [])
    for pid in range(1, 15):
        local.append(session(pid))
        found.append("session_started", OWN, "desk", record={"session_key": f"{OWN}:{pid}:1"})
    burst = read(framer)
    assert [frame.seq for frame in burst] == list(range(1, 15))
    for frame in burst:
        document = frame.document(found.epoch)
        assert (document["seq"], len(document["records"]), document["nodes"][0]["sessions"]) == (
            frame.seq,
            frame.seq,
            frame.seq,
        )
    assert read(framer) == ()


def test_a_client_too_slow_for_its_frames_is_sent_the_union_as_it_is_then() -> None:
    local: list[records.Record] = []
    found = feed(frames=4, local=local)
    framer = found.frames()
    for pid in range(1, 11):
        local.append(session(pid))
        found.append("session_started", OWN, "desk")
    (caught,) = read(framer)  # 11 waiting (the first and ten): past 4, the union now instead
    assert caught.seq == 10 and len(caught.document(found.epoch)["records"]) == 10
    found.append(NODE, "b" * 16, "laptop", detail={"peer_state": "reachable"})
    assert [frame.seq for frame in read(framer)] == [11]
    assert found.subscribers == 1
    framer.__exit__()
    assert found.subscribers == 0
    found.append(NODE, "b" * 16, "laptop", detail={"peer_state": "unreachable"})  # nobody to frame it for
    again = found.frames()
    found.close()
    assert asyncio.run(again.next(0)) is None


def test_the_union_as_text_is_the_union_document_and_each_record_is_encoded_once() -> None:
    """``GET /swarm/snapshot`` and a ``snapshot`` frame write the union from each peer record's
    text, made once per revision: the same document as the one made whole, standing and all,
    and a record replaced is encoded again while the texts of records gone are let go."""
    peers = Peers(OWN)
    peers.frame(
        peer_docs.PEER,
        peer_docs.frame(peer_docs.record(pid=10, name="ünïcode ⏵"), peer_docs.record(pid=11)),
        NOW,
    )
    held = [session(7)]

    def view() -> View:
        return capture("desk", OWN, held, peers, NOW + 2)

    found = Feed(OWN, "desk", view, lambda: NOW)
    assert json.loads(found.snapshot_text()) == found.snapshot()
    texts = found._texts
    first = len(texts)
    assert first == 2
    peers.lost(peer_docs.PEER)
    whole = json.loads(found.snapshot_text())
    assert whole == found.snapshot()
    assert {r["peer_state"] for r in whole["records"] if r["node_id"] == peer_docs.PEER} == {"unreachable"}
    assert len(texts) == first  # the same records: nothing encoded again
    for n in range(600):  # each revision a new document; the old ones' texts are let go
        peers.frame(
            peer_docs.PEER,
            peer_docs.frame(peer_docs.record(pid=10, name=f"v{n}"), peer_docs.record(pid=11)),
            NOW,
        )
        assert json.loads(found.snapshot_text()) == found.snapshot()
    assert len(texts) <= 2 * 2 + 1024
    change = found.snapshot_change()
    assert isinstance(change.snapshot, Whole)
    assert json.loads(change.snapshot.text()) == dict(change.snapshot) == found.snapshot()


def test_the_union_as_text_is_its_document_whatever_it_holds() -> None:
    """Each node's records are joined with its standing in one pass and the head put on the
    first part: the text is still the document with no records at all, with a peer that has
    none, and with no record of this node's; and a document of one node holds its row and
    records alone."""
    reachable = {"node": "far", "node_id": "b" * 16, "peer_state": "reachable", "peer_age_ms": 7}
    unreachable = {**reachable, "node_id": "c" * 16, "peer_state": "unreachable", "peer_age_ms": 9000}

    def far(node_id: str, pid: int, name: str | None = None) -> records.Record:
        return records.Record("far", node_id, f"{node_id}:{pid}:1", pid, 1, NOW, name=name)

    two = (far("b" * 16, 1, 'a "quoted" ⏵'), far("b" * 16, 2))
    shapes = [
        ((), ()),
        ((), ((reachable, ()),)),
        ((session(7),), ((reachable, ()),)),
        ((), ((reachable, two), (unreachable, (far("c" * 16, 3),)))),
        ((session(7), session(8)), ((unreachable, (far("c" * 16, 3),)), (reachable, two))),
    ]
    texts = Texts()
    for local, peers in shapes:
        view = View("desk", OWN, NOW, local, peers)
        whole = view.document(5, 6)
        assert json.loads(view.text(5, 6, texts)) == whole
        assert view.nodes() == whole["nodes"]
        for row in whole["nodes"]:
            one = view.document(5, 6, only=row["node_id"])
            assert one["nodes"] == [row]
            assert one["records"] == [r for r in whole["records"] if r["node_id"] == row["node_id"]]
