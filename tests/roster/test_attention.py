"""The rule above precedence: evidence that a dialog is gone ends a higher source's needs_attention."""

from __future__ import annotations

import pytest

from roost.truth.roster import Roster
from roost.truth.roster.attention import DIALOG_CLOSED
from tests.roster.helpers import Clock, claim, current, events, explained, key

EVIDENCE = "screen: no dialog for 0.5 s after one was shown"


def blocked(hub: Roster, clock: Clock, source: str = "hook") -> None:
    hub.apply(claim(clock, source, activity="working"))
    clock.advance(1)
    hub.apply(claim(clock, source, activity="blocked", fields={"pending": {"summary": "Bash: touch x"}}))
    assert current(hub).activity == "needs_attention"


def gone(clock: Clock, activity: str = "idle") -> object:
    return claim(clock, "screen", process=None, session_key=key(), activity=activity, event=DIALOG_CLOSED)


@pytest.mark.parametrize("source", ["integration", "hook"])
def test_evidence_ends_a_higher_sources_needs_attention(hub: Roster, clock: Clock, source: str) -> None:
    blocked(hub, clock, source)
    hub.apply(claim(clock, "screen", activity="blocked"))
    clock.advance(2)
    outcome = hub.overrule(gone(clock), EVIDENCE)
    assert outcome.accepted, outcome.reasons
    assert events(outcome) == ["attention_cleared"]
    record = current(hub)
    assert (record.activity, record.activity_event, record.pending) == ("idle", DIALOG_CLOSED, None)
    view = explained(hub)
    assert view["fields"]["activity"]["source"] == "screen"
    [entry] = view["overruled"]
    assert entry["source"] == source
    assert entry["ended"]["activity"] == "blocked"
    assert entry["by"]["source"] == "screen"
    assert entry["evidence"] == EVIDENCE
    assert entry["at"] == view["fields"]["activity"]["set_at"]


def test_the_screen_can_say_the_agent_works_on(hub: Roster, clock: Clock) -> None:
    """An approved command that runs a while: the hook's next word comes only when it ends."""
    blocked(hub, clock)
    outcome = hub.overrule(gone(clock, "working"), EVIDENCE)
    assert events(outcome) == ["attention_cleared"]
    assert current(hub).activity == "active"


def test_the_higher_source_speaks_again_after(hub: Roster, clock: Clock) -> None:
    blocked(hub, clock)
    hub.overrule(gone(clock), EVIDENCE)
    clock.advance(1)
    outcome = hub.apply(claim(clock, "hook", activity="working"))
    assert outcome.accepted
    view = explained(hub)
    assert (current(hub).activity, view["fields"]["activity"]["source"]) == ("active", "hook")
    hub.apply(claim(clock, "screen", process=None, session_key=key(), activity="idle"))
    assert current(hub).activity == "active", "the screen still may not overwrite the hook"


def test_nothing_to_overrule_changes_nothing(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "hook", activity="working"))
    before = current(hub)
    outcome = hub.overrule(gone(clock), EVIDENCE)
    assert not outcome.accepted
    assert outcome.reasons == ("no source above screen holds needs_attention",)
    assert outcome.changes == ()
    assert current(hub) == before
    assert explained(hub)["overruled"] == []


def test_a_screen_needs_attention_is_not_overruled_by_itself(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "screen", activity="blocked"))
    outcome = hub.overrule(gone(clock), EVIDENCE)
    assert not outcome.accepted
    assert current(hub).activity == "needs_attention"


def test_a_higher_source_that_says_something_else_is_not_touched(hub: Roster, clock: Clock) -> None:
    """The integration says working, the hook under it says blocked: the record is not
    needs_attention, and the screen cannot reach past the integration."""
    hub.apply(claim(clock, "hook", activity="blocked"))
    hub.apply(claim(clock, "integration", activity="working"))
    outcome = hub.overrule(gone(clock), EVIDENCE)
    assert not outcome.accepted
    assert current(hub).activity == "active"


def test_every_waiting_source_above_goes(hub: Roster, clock: Clock) -> None:
    blocked(hub, clock, "hook")
    hub.apply(claim(clock, "integration", activity="blocked"))
    outcome = hub.overrule(gone(clock), EVIDENCE)
    assert outcome.accepted
    assert current(hub).activity == "idle"
    assert [entry["source"] for entry in explained(hub)["overruled"]] == ["integration", "hook"]


def test_unknown_or_ended_sessions_and_wordless_claims_are_refused(hub: Roster, clock: Clock) -> None:
    assert hub.overrule(gone(clock), EVIDENCE).reasons == ("overruling needs the key of a live session",)
    blocked(hub, clock)
    wordless = claim(clock, "screen", process=None, session_key=key())
    outcome = hub.overrule(wordless, EVIDENCE)
    assert outcome.reasons == ("overruling needs an activity to put in place of the word it ends",)
    assert current(hub).activity == "needs_attention"
    hub.apply(claim(clock, "scan", ended="exit"))
    assert hub.overrule(gone(clock), EVIDENCE).reasons == ("overruling needs the key of a live session",)
