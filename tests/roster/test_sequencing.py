"""Per-source sequence numbers: replays and late arrivals are refused, each source counts alone."""

from __future__ import annotations

from roost.truth.roster import Roster
from tests.roster.helpers import Clock, claim, current, explained


def test_a_replayed_claim_is_refused(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "hook", activity="working", seq=5))
    outcome = hub.apply(claim(clock, "hook", activity="working", seq=5))
    assert not outcome.accepted
    assert outcome.reasons == ("replayed: hook seq 5 was already applied",)
    assert outcome.changes == ()


def test_an_older_claim_arriving_late_is_refused(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "hook", activity="idle", event="turn_end", seq=7))
    outcome = hub.apply(claim(clock, "hook", activity="working", event="prompt", seq=6))
    assert outcome.reasons == ("out of order: hook seq 6 is older than 7",)
    assert current(hub).activity == "idle"


def test_gaps_are_fine(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "hook", activity="working", seq=1))
    assert hub.apply(claim(clock, "hook", activity="idle", seq=100)).accepted


def test_each_source_has_its_own_sequence(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "hook", activity="working", seq=50))
    assert hub.apply(claim(clock, "acp", activity="working", seq=1)).accepted
    assert hub.apply(claim(clock, "hook", fields={"cwd": "/src"}, seq=51)).accepted
    assert explained(hub)["sequences"] == {"acp": 1, "hook": 51}


def test_unsequenced_claims_are_taken_in_arrival_order(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "scan", fields={"harness": "claude"}))
    assert hub.apply(claim(clock, "scan", fields={"harness": "codex"})).accepted
    assert current(hub).harness == "codex"


def test_an_unsequenced_claim_does_not_reset_the_count(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "hook", activity="working", seq=9))
    hub.apply(claim(clock, "hook", activity="working"))
    assert not hub.apply(claim(clock, "hook", activity="idle", seq=9)).accepted


def test_a_refused_claim_is_kept_for_explain_with_its_reason(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "hook", activity="working", event="prompt", seq=3))
    clock.advance(2)
    hub.apply(claim(clock, "hook", activity="idle", event="turn_end", seq=2))
    [rejected] = explained(hub)["rejected"]
    assert rejected["reason"] == "out of order: hook seq 2 is older than 3"
    assert rejected["field"] is None
    assert rejected["claim"] == {
        "source": "hook",
        "seq": 2,
        "event": "turn_end",
        "activity": "idle",
        "received_at": "2023-11-14T22:13:22.000Z",
    }
    assert rejected["at"] == "2023-11-14T22:13:22.000Z"
