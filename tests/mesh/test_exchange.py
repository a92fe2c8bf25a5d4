"""The exchange's reading of a peer's stream, one event at a time: what passes into the union,
what is refused and counted, and the swarm changes it names. No sockets: ``Exchange.take``
is where every byte a peer sends arrives once it is framed."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from types import SimpleNamespace
from typing import Any

import pytest

from roost.base import sse
from roost.pane.tmux.topology import Topology
from roost.remote.mesh import events, tls
from roost.remote.mesh.exchange import BACKOFF_CAP, Exchange, PeerStream, backoff
from roost.remote.swarm.peers import Peers
from roost.truth.roster import Claim, ProcessId, Roster
from roost.truth.roster.live import Live, Stream
from tests.swarm.test_peers import NOW, OWN, PEER, frame, record


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


def exchange() -> tuple[Exchange, Clock]:
    clock = Clock()
    live = Live(Roster("desk", OWN, clock), clock)
    return Exchange(Members(), None, Peers(OWN), live, clock), clock  # type: ignore[arg-type]


def take(found: Exchange, event: str, document: Any) -> bool:
    return found.take(PEER, event, document if isinstance(document, str) else json.dumps(document))


def feed_events(found: Exchange) -> list[tuple[str, str | None]]:
    return [(c.event, (c.record or {}).get("session_key")) for c in found.feed.since(0, None) or ()]


def test_a_frame_enters_the_union_and_names_the_node_and_each_session_once() -> None:
    found, _ = exchange()
    assert take(found, "frame", frame(record(pid=10), record(pid=11))) is True
    union = found.feed.snapshot()
    assert [(r["session_key"], r["peer_state"]) for r in union["records"]] == [
        (f"{PEER}:10:5", "reachable"),
        (f"{PEER}:11:5", "reachable"),
    ]
    assert feed_events(found) == [
        ("node", None),
        ("session_started", f"{PEER}:10:5"),
        ("session_started", f"{PEER}:11:5"),
    ]
    take(found, "frame", frame(record(pid=10), record(pid=11)))  # the same frame again: nothing new
    assert len(feed_events(found)) == 3


def test_a_hostile_frame_loses_its_bad_records_and_they_never_reach_the_union() -> None:
    found, _ = exchange()
    bad = [
        record(pid=12, name="evil\x1b]52;c;aGk=\x07"),
        record(pid=13, session_key=f"{OWN}:13:5"),
        record(pid=14, activity="dancing"),
    ]
    take(found, "frame", frame(record(pid=10), *bad))
    union = found.feed.snapshot()
    assert [r["session_key"] for r in union["records"]] == [f"{PEER}:10:5"]
    assert union["nodes"][1]["dropped"] == 3
    assert all(key in (None, f"{PEER}:10:5") for _, key in feed_events(found))


@pytest.mark.parametrize(
    ("event", "document", "why"),
    [
        ("frame", frame(record(pid=10), node_id=OWN), "a frame speaking for another node"),
        ("frame", {"schema": "something else"}, "not a snapshot document"),
        ("frame", "[[[[", "not JSON"),
        ("change", {"record": record(pid=10)}, "a change before any frame"),
        ("change", [1, 2], "a change that is no object"),
    ],
)
def test_a_refused_event_changes_nothing_and_is_counted(event: str, document: Any, why: str) -> None:
    found, _ = exchange()
    assert take(found, event, document) is False, why
    assert found.feed.snapshot()["records"] == [] and found.feed.head == 0
    assert sum(found.refused.values()) == 1


def test_an_unknown_event_is_left_alone_for_a_newer_peer() -> None:
    found, _ = exchange()
    assert take(found, "something_new", {"x": 1}) is False
    assert found.feed.head == 0 and not found.refused


def test_a_change_after_the_frame_is_named_by_this_nodes_rule_and_a_bad_one_is_dropped() -> None:
    found, clock = exchange()
    take(found, "frame", frame(record(pid=10)))
    clock.now += 3
    take(
        found,
        "change",
        {"event": "made up", "record": record(pid=10, activity="idle", activity_seq=2, revision=2)},
    )
    take(found, "change", {"record": record(pid=10, activity="dancing", revision=3)})
    take(found, "change", {"record": record(pid=10, activity="active", activity_seq=1, revision=1)})  # late
    assert feed_events(found)[-1] == ("activity", f"{PEER}:10:5")
    (kept,) = found.feed.snapshot()["records"]
    assert (kept["activity"], kept["revision"]) == ("idle", 2)
    assert found.peers.get(PEER).dropped == 1  # type: ignore[union-attr]


def test_a_keepalive_is_a_word_and_a_lost_link_is_a_node_change_with_its_age() -> None:
    found, clock = exchange()
    take(found, "frame", frame(record(pid=10)))
    clock.now += 4
    found.take(PEER, events.KEEPALIVE, "")
    clock.now += 6
    found._lost(PEER)
    last = found.feed.since(0, None)[-1]  # type: ignore[index]
    assert (last.event, last.detail["peer_state"], last.detail["peer_age_ms"]) == (
        "node",
        "unreachable",
        6000,
    )  # type: ignore[index]
    (stale,) = found.feed.snapshot()["records"]
    assert (stale["peer_state"], stale["peer_age_ms"]) == ("unreachable", 6000)
    clock.now += 1
    take(found, "frame", frame(record(pid=10, activity="idle", activity_seq=4, revision=4)))
    assert [c.event for c in found.feed.since(0, None)][-2:] == ["node", "activity"]  # type: ignore[union-attr]
    (fresh,) = found.feed.snapshot()["records"]
    assert (fresh["peer_state"], fresh["peer_age_ms"], fresh["activity"]) == ("reachable", 0, "idle")


def test_a_live_session_a_fresh_frame_no_longer_holds_is_said_to_have_ended() -> None:
    """Its owner restarted without it (or it ended and was dropped while the link was down):
    the union loses it with the stale frame, and a client of ``/swarm/changes`` is told it
    ended, for a reason not known; before, the stream said nothing and a client held the
    session live for ever (the soak's restarted node). One already told ended is not told again."""
    found, clock = exchange()
    take(found, "frame", frame(record(pid=10), record(pid=11), record(pid=12, liveness="ended", revision=2)))
    found._lost(PEER)
    clock.now += 40
    take(found, "frame", frame(record(pid=11)))
    changes = found.feed.since(0, None) or ()
    last = changes[-1]
    assert last.record is not None and [c.event for c in changes][-2:] == ["node", "session_ended"]
    assert (last.record["session_key"], last.record["liveness"], last.record["ended_reason"]) == (
        f"{PEER}:10:5",
        "ended",
        None,
    )
    assert (last.record["activity"], last.record["peer_state"]) == ("active", "reachable")
    assert [r["session_key"] for r in found.feed.snapshot()["records"]] == [f"{PEER}:11:5"]


def test_a_day_unheard_drops_the_peer_with_a_node_left() -> None:
    found, clock = exchange()
    take(found, "frame", frame(record(pid=10)))
    clock.now += 24 * 3600
    assert found.expire() == [PEER]
    last = found.feed.since(0, None)[-1]  # type: ignore[index]
    assert (last.event, last.node, last.detail) == ("node_left", "laptop", {"reason": "expired"})
    assert found.feed.snapshot()["records"] == []


def test_backoff_doubles_to_its_cap_with_jitter() -> None:
    assert [round(backoff(n, lambda: 0.5), 2) for n in range(6)] == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]
    assert backoff(50, lambda: 0.0) == pytest.approx(BACKOFF_CAP * 0.8)
    assert backoff(50, lambda: 1.0) == pytest.approx(BACKOFF_CAP * 1.2)


def _linking(
    found: Exchange, follow: Callable[[object], Awaitable[bool]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``found``'s link to PEER with a backoff of an hour, each attempt made by ``follow``
    (whether a frame came on it)."""
    monkeypatch.setattr("roost.remote.mesh.exchange.backoff", lambda attempt: 3600.0)
    found.membership = SimpleNamespace(members={PEER: SimpleNamespace(revoked=False)})  # type: ignore[assignment]
    found._follow = follow  # type: ignore[method-assign]


def test_a_hello_from_a_member_whose_link_failed_tries_it_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A joiner refuses the admitter's first dial and greets it once joined: the link must not
    wait out its backoff (the join's ~0.5 s until the joiner is in the union)."""
    found, _ = exchange()
    outcomes = [False, True]

    async def follow(member: object) -> bool:
        return outcomes.pop(0)

    _linking(found, follow, monkeypatch)

    async def run() -> None:
        link = asyncio.create_task(found._link(PEER))
        await asyncio.sleep(0.05)
        assert outcomes == [True]  # refused, and waiting its hour
        found.heard("someone-else")
        await asyncio.sleep(0.05)
        assert outcomes == [True]
        found.heard(PEER)
        await asyncio.sleep(0.05)
        assert outcomes == []  # tried at once; that stream was live, then ended, and it waits
        link.cancel()
        await asyncio.gather(link, return_exceptions=True)

    asyncio.run(run())
    assert found._nudged == {}  # a link that ends leaves nothing behind


def test_a_hello_while_the_stream_was_live_does_not_skip_the_backoff_after_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    found, _ = exchange()
    tried, ended = [], asyncio.Event()

    async def follow(member: object) -> bool:
        tried.append(member)
        if len(tried) > 1:
            return False  # a dial too soon, refused
        found.heard(PEER)  # greeted while its stream is live
        await ended.wait()
        return True

    _linking(found, follow, monkeypatch)

    async def run() -> None:
        link = asyncio.create_task(found._link(PEER))
        await asyncio.sleep(0.05)
        ended.set()
        await asyncio.sleep(0.1)
        link.cancel()
        await asyncio.gather(link, return_exceptions=True)

    asyncio.run(run())
    assert len(tried) == 1


async def _read(*parts: bytes, limit: int = 100) -> list[tuple[str, str]]:
    async def chunks() -> AsyncIterator[bytes]:
        for part in parts:
            yield part

    return [found async for found in events.read(chunks(), limit)]


def test_the_event_reader_frames_events_and_refuses_a_flood() -> None:
    said = asyncio.run(_read(b'event: frame\ndata: {"a"', b":1}\n\n: keepalive\n\n"))
    assert said == [("frame", '{"a":1}'), (events.KEEPALIVE, "")]
    with pytest.raises(sse.TooLarge):
        asyncio.run(_read(b"data: " + b"x" * 200))  # a line that never ends
    with pytest.raises(sse.TooLarge):
        asyncio.run(_read(*[b"data: xxxxxxxxxx\n"] * 20))  # an event that never ends


class Members:
    """As much of :class:`Membership` as ``Exchange.sync`` reads: the current peers and every
    record, revoked ones too."""

    revoked = None
    """This node itself is no one's to revoke here."""

    def __init__(self, **revoked_by: str) -> None:
        self.members = {
            node_id: SimpleNamespace(node_id=node_id, name="n2", signer=signer, revoked=True)
            for node_id, signer in revoked_by.items()
        }

    def peers(self) -> list[object]:
        return []


def test_a_revocation_ends_the_served_stream_and_drops_the_peer_at_once() -> None:
    found, _ = exchange()
    found.membership = Members(**{PEER: OWN})  # type: ignore[assignment]
    take(found, "frame", frame(record(pid=10)))

    async def revoke() -> tuple[bool, bool]:
        served = found.live.subscribe(replay=False, own=True)
        found.served[PEER] = served
        link = asyncio.ensure_future(asyncio.sleep(3600))
        found.links[PEER] = link
        found.sync()
        await asyncio.sleep(0)
        return served.closed, link.cancelled()

    assert asyncio.run(revoke()) == (True, True)
    assert found.served == {} and found.links == {} and found.peers.get(PEER) is None
    last = found.feed.since(0, None)[-1]  # type: ignore[index]
    assert (last.event, last.detail) == ("node_left", {"reason": "revoked"})
    assert found.feed.snapshot()["records"] == []


def test_a_node_that_revoked_itself_left() -> None:
    found, _ = exchange()
    found.membership = Members(**{PEER: PEER})  # type: ignore[assignment]
    take(found, "frame", frame(record(pid=10)))
    found.sync()
    assert found.feed.since(0, None)[-1].detail == {"reason": "left"}  # type: ignore[index]


def test_the_swarm_cursor_is_never_the_rosters() -> None:
    found, _ = exchange()
    assert found.feed.epoch == found.live.roster.status_epoch + 1


SHELL = {"pane": "%1", "session": "main", "window": "zsh", "name": None, "command": "zsh", "cwd": "/srv/app"}


def test_a_peers_terminal_list_enters_its_row_and_a_change_of_it_is_a_terminals_change() -> None:
    """A plain shell is in no roster: the peer's terminal list is how this node learns of it."""
    found, _ = exchange()
    take(found, "frame", frame(record(pid=10)))
    agent = {**SHELL, "pane": "%2", "window": "far", "name": "far", "command": "claude"}
    take(found, "terminals", {"terminals": [SHELL, agent, {**SHELL, "pane": "3"}]})
    row = found.feed.snapshot()["nodes"][1]
    assert (row["terminals"], row["dropped"]) == ([SHELL, agent], 1)  # a pane that is not one: dropped
    last = found.feed.since(0, None)[-1]  # type: ignore[index]
    assert (last.event, last.node_id, last.detail) == ("terminals", PEER, {"terminals": [SHELL, agent]})
    head = found.feed.head
    take(found, "terminals", {"terminals": [SHELL, agent]})  # the same list again: nothing new
    assert found.feed.head == head
    take(found, "frame", frame(record(pid=10)))  # a fresh frame keeps the list until the next one
    assert found.feed.snapshot()["nodes"][1]["terminals"] == [SHELL, agent]


@pytest.mark.parametrize(
    ("document", "why"),
    [
        ({"terminals": "zsh"}, "no list"),
        ({"terminals": [SHELL] * 2001}, "a flood"),
        ([SHELL], "no object"),
    ],
)
def test_a_terminal_list_that_is_none_changes_nothing_and_is_counted(document: Any, why: str) -> None:
    found, _ = exchange()
    take(found, "frame", frame(record(pid=10)))
    head = found.feed.head
    take(found, "terminals", document)
    assert found.feed.head == head and found.refused == {"terminals": 1}, why
    assert found.feed.snapshot()["nodes"][1]["terminals"] is None


def test_a_terminal_list_before_any_frame_is_refused() -> None:
    found, _ = exchange()
    take(found, "terminals", {"terminals": [SHELL]})
    assert found.refused == {"terminals": 1} and found.feed.head == 0


def test_this_nodes_terminals_are_listed_once_per_change_and_sent_on_every_stream() -> None:
    found, _ = exchange()
    listings = [[SHELL]]
    asked: list[int] = []

    async def listed() -> list[dict[str, str | None]]:
        asked.append(1)
        return [dict(pane) for pane in listings[-1]]

    async def go() -> tuple[list[str], list[str]]:
        topology = Topology()
        found.share_terminals(listed, topology)
        found.keepalive = 0.05
        found.start()
        served = [found._frames(served_stream(found, f"peer{n}")) for n in range(2)]
        heard = [[], []]  # type: list[list[str]]
        for stream, into in zip(served, heard, strict=True):
            into.append((await anext(stream)).decode())  # the frame
        await asyncio.sleep(0.05)
        for stream, into in zip(served, heard, strict=True):
            into.append((await anext(stream)).decode())  # the list
        listings.append([SHELL, {**SHELL, "pane": "%4"}])
        topology.bump()
        topology.bump()  # a burst: one list
        for stream, into in zip(served, heard, strict=True):
            while "%4" not in into[-1]:
                into.append((await asyncio.wait_for(anext(stream), 5)).decode())
        for stream in served:
            await stream.aclose()
        topology.close()
        await found.stop()
        return heard[0], heard[1]

    one, two = asyncio.run(go())
    for heard in (one, two):
        assert heard[0].startswith("event: frame\n")
        assert heard[1].startswith("event: terminals\n") and '"pane":"%1"' in heard[1]
        assert heard[-1].startswith("event: terminals\n") and '"pane":"%4"' in heard[-1]
    assert len(asked) == 2  # the first list and the burst's, for both streams
    assert [c.event for c in found.feed.since(0, None) or ()] == ["terminals", "terminals"]
    own = found.feed.snapshot()["nodes"][0]
    assert own["terminals"] == [SHELL, {**SHELL, "pane": "%4"}]


def served_stream(found: Exchange, node_id: str) -> Stream:
    """A stream served to ``node_id``, as ``GET /swarm/roster`` registers one."""
    stream = found.live.subscribe(replay=False, own=True)
    found.served[node_id] = stream
    return stream


def test_quiet_streams_are_kept_alive_by_one_beat_and_wait_on_no_task_of_their_own() -> None:
    """A thousand members means a thousand served streams: each quiet one gets a keep-alive
    every beat, and none holds a task or a timer of its own while it waits."""
    found, clock = exchange()

    async def go() -> tuple[list[list[bytes]], list[int], bytes]:
        found.keepalive = 0.05
        found.start()
        await asyncio.sleep(0)
        alone = len(asyncio.all_tasks())
        served = [found._frames(served_stream(found, f"peer{n}")) for n in range(3)]
        heard: list[list[bytes]] = [[await anext(stream)] for stream in served]  # the frames
        waiting = []
        for _ in range(3):
            for stream, into in zip(served, heard, strict=True):
                into.append(await asyncio.wait_for(anext(stream), 5))
                waiting.append(len(asyncio.all_tasks()) - alone)
        claim = Claim(
            "hook", clock.now, process=ProcessId(4242, 1000), activity="working", started_at=clock.now
        )
        found.live.apply(claim)
        change = await asyncio.wait_for(anext(served[1]), 5)
        for stream in served:
            await stream.aclose()
        await found.stop()
        return heard, waiting, change

    heard, waiting, change = asyncio.run(go())
    for stream in heard:
        assert stream[0].startswith(b"event: frame\n")
        assert stream[1:] == [sse.KEEPALIVE.encode()] * 3
    assert waiting == [0] * 9  # between reads, not one task is left waiting for a stream
    assert change.startswith(b"event: change\n") and b"4242" in change


def test_the_union_holds_this_nodes_records_as_the_feed_has_numbered_them() -> None:
    """A union taken at change ``seq`` holds nothing a later change will announce: this node's
    record enters it with the change the feed numbers for it, not a moment before, when only
    the roster had it (``/swarm/events`` sends the union each change left)."""
    found, clock = exchange()

    async def go() -> tuple[list[str], list[str], list[str]]:
        found.start()
        claim = Claim(
            "hook", clock.now, process=ProcessId(4242, 1000), activity="working", started_at=clock.now
        )
        assert found.live.apply(claim).accepted
        early = [r["session_key"] for r in found.feed.snapshot()["records"]]
        await asyncio.sleep(0.05)
        late = [r["session_key"] for r in found.feed.snapshot()["records"]]
        numbered = [c.record["session_key"] for c in found.feed.since(0, None) or () if c.record]
        await found.stop()
        return early, late, numbered

    early, late, numbered = asyncio.run(go())
    assert (early, late, numbered) == ([], [f"{OWN}:4242:1000"], [f"{OWN}:4242:1000"])


def test_a_frame_larger_than_a_piece_is_served_in_pieces_that_make_it_whole() -> None:
    """A peer's first frame holds all its sessions (~50 KB for fifty): written whole, it would
    grow the connection's outgoing TLS buffer to that size for the stream's life."""
    found, clock = exchange()
    for pid in range(4000, 4060):
        claim = Claim(
            "hook", clock.now, process=ProcessId(pid, 1000), activity="working", started_at=clock.now
        )
        found.live.apply(claim)

    async def go() -> list[bytes]:
        found.start()
        stream = PeerStream(found._frames(served_stream(found, "peer0")), lambda: None).body_iterator
        pieces = [await anext(stream)]
        while not pieces[-1].endswith(b"\n\n"):
            pieces.append(await asyncio.wait_for(anext(stream), 5))
        await stream.aclose()  # type: ignore[attr-defined]
        await found.stop()
        return pieces

    pieces = asyncio.run(go())
    assert len(pieces) > 1 and max(map(len, pieces)) <= tls.WRITE_PIECE
    head, data = b"".join(pieces).decode().split("\n", 1)
    assert head == "event: frame"
    frame = json.loads("".join(line.removeprefix("data: ") for line in data.strip().split("\n")))
    assert len(frame["records"]) == 60
