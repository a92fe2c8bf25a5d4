"""``?since=SEQ``: replay from the ring, or one snapshot when the ring cannot answer."""

from __future__ import annotations

from roost.truth.roster import ProcessId, Roster
from tests.roster.helpers import Clock, claim, events, key, roster


def busy(hub: Roster, clock: Clock, count: int) -> None:
    """``count`` changes: a session started, then activity after activity."""
    hub.apply(claim(clock, "hook", activity="working"))
    for _ in range(count - 1):
        hub.apply(claim(clock, "hook", activity="working"))
    assert hub.head == count


def test_a_new_subscriber_gets_one_snapshot_at_the_head(hub: Roster, clock: Clock) -> None:
    busy(hub, clock, 3)
    [change] = hub.changes_since(None)
    doc = change.to_json()
    assert (doc["event"], doc["seq"]) == ("snapshot", 3)
    assert doc["snapshot"]["schema"] == "rosterd.snapshot.v1"
    assert doc["snapshot"]["seq"] == 3
    assert [record["session_key"] for record in doc["snapshot"]["records"]] == [key()]
    assert "record" not in doc


def test_a_subscriber_that_is_up_to_date_gets_nothing(hub: Roster, clock: Clock) -> None:
    busy(hub, clock, 3)
    assert hub.changes_since(3) == ()


def test_a_subscriber_gets_exactly_what_it_missed(hub: Roster, clock: Clock) -> None:
    busy(hub, clock, 5)
    missed = hub.changes_since(2)
    assert [change.seq for change in missed] == [3, 4, 5]
    assert events(missed) == ["activity"] * 3


def test_an_empty_roster_replays_nothing_from_zero(hub: Roster) -> None:
    assert hub.changes_since(0) == ()


def test_a_seq_that_fell_out_of_the_ring_gets_a_snapshot(clock: Clock) -> None:
    hub = roster(clock, ring_size=4)
    busy(hub, clock, 10)
    assert [change.seq for change in hub.changes_since(6)] == [7, 8, 9, 10], "the oldest kept is 7"
    [snapshot] = hub.changes_since(5)
    assert (snapshot.event, snapshot.seq) == ("snapshot", 10)
    assert hub.changes_since(0)[0].event == "snapshot"


def test_a_seq_ahead_of_the_log_is_from_another_life_and_gets_a_snapshot(hub: Roster, clock: Clock) -> None:
    busy(hub, clock, 2)
    assert events(hub.changes_since(50)) == ["snapshot"]
    assert events(hub.changes_since(-1)) == ["snapshot"]


def test_a_seq_from_another_status_epoch_gets_a_snapshot(hub: Roster, clock: Clock) -> None:
    busy(hub, clock, 3)
    assert events(hub.changes_since(1, status_epoch=6)) == ["snapshot"]
    assert [change.seq for change in hub.changes_since(1, status_epoch=7)] == [2, 3]


def test_replay_interleaves_sessions_in_seq_order(hub: Roster, clock: Clock) -> None:
    other = ProcessId(9, 9)
    hub.apply(claim(clock, "hook", activity="working"))
    hub.apply(claim(clock, "hook", process=other, activity="blocked"))
    hub.apply(claim(clock, "hook", activity="done"))
    replay = hub.changes_since(0)
    assert [(change.seq, change.event, change.record.session_key) for change in replay if change.record] == [
        (1, "session_started", key()),
        (2, "session_started", key(other)),
        (3, "attention", key(other)),
        (4, "activity", key()),
    ]
