"""Nested processes of one session collapse into its root; a spawned child session stands alone."""

from __future__ import annotations

from roost.truth.roster import ProcessId, Roster
from tests.roster.helpers import ROOT, Clock, claim, current, events, key

CHILD = ProcessId(5000, 1100)
GRANDCHILD = ProcessId(5001, 1101)


def rooted(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "scan", fields={"harness": "claude", "session_id": "s-root"}))


def test_a_claim_about_a_child_process_attaches_to_the_root(hub: Roster, clock: Clock) -> None:
    rooted(hub, clock)
    outcome = hub.apply(claim(clock, "hook", process=CHILD, ancestors=(ROOT,), activity="working"))
    assert outcome.session_key == key()
    assert [record.session_key for record in hub.records()] == [key()]
    assert current(hub).activity == "active"
    assert (current(hub).pid, current(hub).start_ticks) == (ROOT.pid, ROOT.start_ticks), "the root stays"


def test_any_depth_collapses_into_the_nearest_known_ancestor(hub: Roster, clock: Clock) -> None:
    rooted(hub, clock)
    shell = ProcessId(4300, 1050)
    outcome = hub.apply(
        claim(clock, "scan", process=GRANDCHILD, ancestors=(CHILD, shell, ROOT, ProcessId(1, 0)))
    )
    assert outcome.session_key == key()
    assert len(hub.records()) == 1


def test_a_nested_process_is_then_known_without_its_ancestry(hub: Roster, clock: Clock) -> None:
    rooted(hub, clock)
    hub.apply(claim(clock, "scan", process=CHILD, ancestors=(ROOT,)))
    assert hub.find(CHILD) == key()
    assert hub.apply(claim(clock, "hook", process=CHILD, activity="idle")).session_key == key()
    assert hub.apply(claim(clock, "scan", process=GRANDCHILD, ancestors=(CHILD,))).session_key == key()


def test_the_same_harness_session_id_below_the_root_is_still_the_root(hub: Roster, clock: Clock) -> None:
    rooted(hub, clock)
    outcome = hub.apply(
        claim(clock, "hook", process=CHILD, ancestors=(ROOT,), fields={"session_id": "s-root"})
    )
    assert outcome.session_key == key()


def test_a_harness_with_another_session_id_is_a_child_session(hub: Roster, clock: Clock) -> None:
    rooted(hub, clock)
    outcome = hub.apply(
        claim(
            clock,
            "hook",
            process=CHILD,
            ancestors=(ROOT,),
            fields={"session_id": "s-child"},
            activity="working",
        )
    )
    assert outcome.session_key == key(CHILD)
    assert events(outcome) == ["session_started"]
    child = current(hub, key(CHILD))
    assert child.parent_session_key == key()
    assert current(hub).activity == "unknown", "the parent is untouched"


def test_a_launcher_registered_below_a_session_is_its_child(hub: Roster, clock: Clock) -> None:
    rooted(hub, clock)
    outcome = hub.apply(claim(clock, "launcher", process=CHILD, ancestors=(ROOT,), fields={"name": "tests"}))
    assert outcome.session_key == key(CHILD)
    assert current(hub, key(CHILD)).parent_session_key == key()


def test_an_unknown_ancestry_starts_a_session_of_its_own(hub: Roster, clock: Clock) -> None:
    outcome = hub.apply(claim(clock, "scan", process=CHILD, ancestors=(ProcessId(1, 0),)))
    assert outcome.session_key == key(CHILD)
    assert current(hub, key(CHILD)).parent_session_key is None


def test_a_nested_process_ending_leaves_its_session_live(hub: Roster, clock: Clock) -> None:
    rooted(hub, clock)
    hub.apply(claim(clock, "scan", process=CHILD, ancestors=(ROOT,)))
    outcome = hub.apply(claim(clock, "scan", process=CHILD, ended="exit"))
    assert outcome.accepted and outcome.changes == ()
    assert current(hub).liveness == "live"
    assert hub.find(CHILD) is None


def test_the_root_ending_ends_the_session_and_forgets_its_nested_processes(hub: Roster, clock: Clock) -> None:
    rooted(hub, clock)
    hub.apply(claim(clock, "scan", process=CHILD, ancestors=(ROOT,)))
    outcome = hub.apply(claim(clock, "scan", ended="exit"))
    assert events(outcome) == ["session_ended"]
    assert hub.find(CHILD) is None and hub.find(ROOT) is None


def test_a_claim_addressed_by_key_from_a_nested_process_is_no_new_occupant(hub: Roster, clock: Clock) -> None:
    rooted(hub, clock)
    occupant = current(hub).occupant_id
    outcome = hub.apply(
        claim(clock, "hook", process=CHILD, ancestors=(ROOT,), session_key=key(), activity="working")
    )
    assert outcome.accepted
    assert (current(hub).occupant_id, current(hub).pid) == (occupant, ROOT.pid)
