"""Revisions and completed turns, and a model check of precedence, leases and sequencing."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from roost.truth.roster import Roster, precedence, records
from roost.truth.roster.precedence import SOURCES
from tests.conftest import examples
from tests.roster.helpers import Clock, claim, current, key, roster


def test_the_first_record_is_revision_one_and_each_change_adds_one(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "hook", activity="working"))
    assert current(hub).revision == 1
    hub.apply(claim(clock, "hook", fields={"cwd": "/src"}))
    assert current(hub).revision == 2


def test_a_refused_claim_changes_no_revision(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "hook", activity="working", seq=2))
    hub.apply(claim(clock, "scan", fields={"harness": "claude"}))
    assert current(hub).revision == 2
    assert not hub.apply(claim(clock, "hook", activity="idle", seq=1)).accepted
    assert not hub.apply(claim(clock, "scan", activity="idle")).accepted
    assert current(hub).revision == 2


def test_a_claim_that_changes_nothing_visible_changes_no_revision(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "scan", fields={"harness": "claude"}))
    outcome = hub.apply(claim(clock, "scan", fields={"harness": "claude"}))
    assert outcome.accepted and outcome.changes == ()
    assert current(hub).revision == 1


def test_every_activity_claim_is_counted_even_when_the_word_is_the_same(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "hook", activity="working", event="prompt"))
    hub.apply(claim(clock, "hook", activity="working", event="tool_call"))
    record = current(hub)
    assert (record.activity_seq, record.revision) == (2, 2)


def test_the_record_carries_the_status_epoch(clock: Clock) -> None:
    hub = roster(clock, status_epoch=99)
    hub.apply(claim(clock, "hook", activity="working"))
    assert current(hub).status_epoch == 99 == hub.snapshot()["status_epoch"]


def test_by_default_the_status_epoch_is_the_registry_start_in_milliseconds(clock: Clock) -> None:
    assert Roster("n", "id", clock).status_epoch == int(clock.now * 1000)


def test_completed_revision_is_where_a_turn_ended(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "hook", activity="working", event="prompt"))
    assert current(hub).completed_revision is None
    hub.apply(claim(clock, "hook", activity="done", event="turn_end"))
    done = current(hub)
    assert done.completed_revision == done.revision
    hub.apply(claim(clock, "hook", activity="working", event="prompt"))
    assert current(hub).completed_revision == done.revision, "a new turn keeps the last completion"
    hub.apply(claim(clock, "hook", activity="blocked", event="permission"))
    hub.apply(claim(clock, "hook", activity="idle", event="turn_end"))
    assert current(hub).completed_revision == current(hub).revision


def test_a_failed_turn_completes_idle_with_its_reason(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "hook", activity="working"))
    hub.apply(claim(clock, "hook", activity="error", event="StopFailure"))
    record = current(hub)
    assert (record.activity, record.error_reason) == ("idle", "StopFailure")
    assert record.completed_revision == record.revision
    hub.apply(claim(clock, "hook", activity="working"))
    assert current(hub).error_reason is None


def test_idle_after_idle_is_not_a_completed_turn(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "hook", activity="idle"))
    hub.apply(claim(clock, "hook", activity="idle", event="turn_end"))
    assert current(hub).completed_revision is None


def test_a_session_that_ends_busy_completes_no_turn(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "hook", activity="working"))
    hub.apply(claim(clock, "scan", ended="crash"))
    assert current(hub).completed_revision is None


# A model check: random claims, clock steps and ticks on one session, against a few lines that
# restate the rules (highest counting source wins, integration's lease, per-source order).
OPERATION = st.one_of(
    st.tuples(
        st.just("claim"),
        st.sampled_from(SOURCES),
        st.sampled_from(["working", "blocked", "done", "idle", "error", "active", "needs_attention"]),
        st.one_of(st.none(), st.integers(min_value=0, max_value=6)),
    ),
    st.tuples(st.just("advance"), st.floats(min_value=0.0, max_value=40.0)),
    st.tuples(st.just("tick")),
)


@settings(max_examples=examples(300), deadline=None, database=None)
@given(st.lists(OPERATION, max_size=40))
def test_the_roster_agrees_with_a_model_of_its_rules(operations: list[tuple]) -> None:
    clock = Clock()
    hub = roster(clock)
    words: dict[str, str] = {}
    heard: dict[str, float] = {}
    last_seq: dict[str, int] = {}
    previous: records.Record | None = None
    for operation in operations:
        if operation[0] == "advance":
            clock.advance(operation[1])
            continue
        if operation[0] == "tick":
            changes = hub.tick()
        else:
            _, source, word, seq = operation
            head = hub.head
            outcome = hub.apply(claim(clock, source, activity=word, seq=seq))
            changes = outcome.changes
            assert [change.seq for change in changes] == list(range(head + 1, head + 1 + len(changes)))
            if seq is None or source not in last_seq or seq > last_seq[source]:
                if seq is not None:
                    last_seq[source] = seq
                heard[source] = clock.now
                words[source] = records.to_activity(word)
            else:
                assert not outcome.accepted
        now_record = hub.record(key())
        if now_record is None:
            continue
        counting = [
            source
            for source in SOURCES
            if source in words and not precedence.lease_expired(source, heard.get(source), clock.now)
        ]
        assert now_record.activity == (words[counting[0]] if counting else "unknown")
        if previous is not None:
            if now_record == previous:
                assert not changes
            else:
                assert now_record.revision > previous.revision
                assert now_record.activity_seq >= previous.activity_seq
        previous = now_record
