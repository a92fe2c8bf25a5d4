"""A pending request in one shape whatever reported it, and its identity kept across repeats."""

from __future__ import annotations

from roost.truth.roster import Roster
from roost.truth.roster.pending import normalized
from tests.roster.helpers import Clock, claim, current

FIELDS = ["kind", "id", "tool", "summary", "options", "opened_at", "answerable"]


def test_every_field_is_present_and_a_bare_summary_cannot_be_answered_here() -> None:
    shaped = normalized({"summary": "Bash: touch x"}, None, 1_700_000_000.0)
    assert sorted(shaped) == sorted(FIELDS)
    assert shaped["kind"] == "permission"
    assert shaped["answerable"] is False
    assert shaped["options"] == []
    assert shaped["opened_at"] == "2023-11-14T22:13:20.000Z"
    assert len(shaped["id"]) == 16


def test_what_the_reporter_says_is_kept_and_only_true_makes_it_answerable() -> None:
    given = {"id": "r1", "tool": "Bash", "options": [{"id": "o", "kind": "allow_once", "name": "Allow"}]}
    shaped = normalized({**given, "answerable": "yes", "tool_call_id": "t"}, None, 0.0)
    assert (shaped["id"], shaped["tool"], shaped["tool_call_id"]) == ("r1", "Bash", "t")
    assert shaped["options"] == given["options"]
    assert shaped["answerable"] is False
    assert normalized({"answerable": True}, None, 0.0)["answerable"] is True


def test_a_repeat_of_the_same_wait_keeps_its_identity() -> None:
    first = normalized(
        {"summary": "Bash: touch x", "answerable": True, "options": [{"kind": "allow_once"}]}, None, 1.0
    )
    again = normalized({"summary": "Bash: touch x"}, first, 9.0)
    assert again == first
    quieter = normalized({}, first, 9.0)
    assert quieter == first


def test_a_different_request_is_a_new_one() -> None:
    first = normalized({"summary": "Bash: touch x"}, None, 1.0)
    other = normalized({"summary": "Bash: rm y"}, first, 9.0)
    assert other["id"] != first["id"]
    assert other["opened_at"] != first["opened_at"]
    named = normalized({"id": "given", "summary": "Bash: touch x"}, first, 9.0)
    assert named["id"] == "given"


def _asks(hub: Roster, clock: Clock, event: str) -> None:
    """The hook says the session waits on ``Bash: x``, through ``event``."""
    hub.apply(
        claim(clock, "hook", activity="blocked", event=event, fields={"pending": {"summary": "Bash: x"}})
    )


def test_in_the_roster_a_notification_after_the_request_keeps_its_id(hub: Roster, clock: Clock) -> None:
    _asks(hub, clock, "PermissionRequest")
    first = current(hub).pending
    clock.advance(5)
    _asks(hub, clock, "Notification:permission_prompt")
    assert current(hub).pending == first
    hub.apply(claim(clock, "hook", activity="working", event="PostToolUse"))
    assert current(hub).pending is None
    clock.advance(1)
    _asks(hub, clock, "PermissionRequest")
    assert current(hub).pending["id"] != first["id"]  # answered, then asked again: a new request


def test_pending_shows_only_while_the_session_waits(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "hook", activity="working", fields={"pending": {"summary": "stale"}}))
    assert current(hub).pending is None
