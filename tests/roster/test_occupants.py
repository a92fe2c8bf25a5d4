"""Occupants: a new process in the same session is a new occupant, and old ones cannot come back."""

from __future__ import annotations

from typing import Any

from roost.truth.roster import ProcessId, Roster
from tests.roster.helpers import ROOT, Clock, claim, current, events, explained, key

NEW = ProcessId(5151, 2000)


def occupied(hub: Roster, clock: Clock) -> None:
    hub.apply(
        claim(
            clock,
            "hook",
            activity="working",
            seq=10,
            fields={"name": "api", "cwd": "/src", "harness": "claude", "session_id": "s-1", "recap": "r"},
        )
    )


def replace(hub: Roster, clock: Clock, **kw: Any) -> None:
    clock.advance(1)
    outcome = hub.apply(claim(clock, "hook", process=NEW, session_key=key(), **kw))
    assert outcome.accepted, outcome.reasons


def test_a_new_process_in_the_session_bumps_the_occupant(hub: Roster, clock: Clock) -> None:
    occupied(hub, clock)
    before = current(hub)
    replace(hub, clock, seq=1, activity="idle", fields={"harness": "codex"})
    after = current(hub)
    assert after.session_key == key(ROOT), "the key stays with the session"
    assert (after.pid, after.start_ticks) == (NEW.pid, NEW.start_ticks)
    assert after.occupant_id > before.occupant_id
    assert after.revision > before.revision


def test_what_described_the_old_process_is_forgotten_and_the_session_kept(hub: Roster, clock: Clock) -> None:
    occupied(hub, clock)
    replace(hub, clock)
    record = current(hub)
    assert (record.name, record.cwd) == ("api", "/src")
    assert (record.activity, record.harness, record.session_id, record.recap) == ("unknown", None, None, None)


def test_the_new_occupant_numbers_its_claims_afresh(hub: Roster, clock: Clock) -> None:
    occupied(hub, clock)
    replace(hub, clock, seq=1, activity="working")
    assert explained(hub)["sequences"] == {"hook": 1}


def test_a_late_claim_from_a_former_occupant_is_refused(hub: Roster, clock: Clock) -> None:
    occupied(hub, clock)
    replace(hub, clock)
    outcome = hub.apply(claim(clock, "hook", activity="idle", seq=11))
    assert not outcome.accepted
    assert outcome.reasons == (f"process {ROOT.pid} is a former occupant of this session",)
    addressed = hub.apply(claim(clock, "hook", session_key=key(), activity="idle", seq=11))
    assert addressed.reasons == outcome.reasons


def test_the_new_occupant_is_found_by_its_process(hub: Roster, clock: Clock) -> None:
    occupied(hub, clock)
    replace(hub, clock)
    assert hub.find(NEW) == key() and hub.find(ROOT) is None
    assert hub.apply(claim(clock, "screen", process=NEW, activity="working")).session_key == key()


def test_a_claim_fenced_to_an_old_occupant_is_refused(hub: Roster, clock: Clock) -> None:
    occupied(hub, clock)
    first = current(hub).occupant_id
    replace(hub, clock)
    outcome = hub.apply(
        claim(clock, "acp", process=None, session_key=key(), activity="working", occupant_id=first)
    )
    assert outcome.reasons == (
        f"occupant changed: the claim names occupant {first}, the session's is {current(hub).occupant_id}",
    )
    fenced = hub.apply(
        claim(
            clock,
            "acp",
            process=None,
            session_key=key(),
            activity="working",
            occupant_id=current(hub).occupant_id,
        )
    )
    assert fenced.accepted


def test_occupant_ids_are_never_reused_across_sessions(hub: Roster, clock: Clock) -> None:
    occupied(hub, clock)
    hub.apply(claim(clock, "hook", process=ProcessId(7, 7), activity="working"))
    replace(hub, clock)
    ids = [current(hub).occupant_id, current(hub, key(ProcessId(7, 7))).occupant_id, 1]
    assert sorted(ids) == [1, 2, 3]


def test_replacement_alone_changes_activity_and_reports_it(hub: Roster, clock: Clock) -> None:
    occupied(hub, clock)
    clock.advance(1)
    outcome = hub.apply(claim(clock, "scan", process=NEW, session_key=key()))
    assert events(outcome) == ["activity"]
    assert current(hub).activity == "unknown"


def test_a_claim_for_a_key_that_never_existed_is_refused(hub: Roster, clock: Clock) -> None:
    outcome = hub.apply(claim(clock, "hook", process=None, session_key="elsewhere:1:1", activity="working"))
    assert (outcome.accepted, outcome.session_key, outcome.reasons) == (
        False,
        None,
        ("unknown session elsewhere:1:1",),
    )


def test_a_key_matching_its_own_process_starts_the_session(hub: Roster, clock: Clock) -> None:
    outcome = hub.apply(claim(clock, "launcher", session_key=key(), fields={"lane": "headless"}))
    assert events(outcome) == ["session_started"]
    assert current(hub).lane == "headless"
