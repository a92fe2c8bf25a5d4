"""The change each transition emits, and a session's life from first claim to being dropped."""

from __future__ import annotations

import json
from typing import Any

import pytest

from roost.truth.roster import ProcessId, Roster, changes
from roost.truth.roster.records import Record
from tests.roster.helpers import Clock, claim, current, events, key


def test_the_first_claim_starts_a_session(hub: Roster, clock: Clock) -> None:
    outcome = hub.apply(claim(clock, "scan", fields={"harness": "claude"}))
    assert events(outcome) == ["session_started"]
    assert current(hub).activity == "unknown"


def test_a_session_first_seen_waiting_is_started_and_needs_attention(hub: Roster, clock: Clock) -> None:
    assert events(hub.apply(claim(clock, "hook", activity="blocked"))) == ["session_started", "attention"]


# (claims in order, as internal words) -> the change the last one emits
TRANSITIONS = [
    (["working", "done"], ["activity"]),
    (["idle", "working"], ["activity"]),
    (["working", "working"], ["activity"]),
    (["working", "blocked"], ["attention"]),
    (["blocked", "blocked"], ["attention"]),
    (["blocked", "working"], ["attention_cleared"]),
    (["blocked", "done"], ["attention_cleared"]),
    (["blocked", "error"], ["attention_cleared"]),
    (["needs_attention", "active"], ["attention_cleared"]),
]


@pytest.mark.parametrize(("words", "emitted"), TRANSITIONS, ids=["->".join(w) for w, _ in TRANSITIONS])
def test_each_activity_transition_emits_its_change(
    words: list[str], emitted: list[str], hub: Roster, clock: Clock
) -> None:
    *before, last = words
    for word in before:
        hub.apply(claim(clock, "hook", activity=word))
    assert events(hub.apply(claim(clock, "hook", activity=last))) == emitted


def test_one_request_said_again_is_one_attention(hub: Roster, clock: Clock) -> None:
    """A wait is its request: the hook's word, then a notification about the same dialog, then
    the pane's badge read back all name one request, and only the first is an ``attention``."""
    hub.apply(claim(clock, "hook", activity="working"))
    asks = {"pending": {"summary": "Bash: npm test", "tool": "Bash"}}
    opened = hub.apply(claim(clock, "hook", activity="blocked", event="PermissionRequest", fields=asks))
    assert events(opened) == ["attention"]
    request = current(hub).pending
    for event in ("Notification:permission_prompt", "permission"):
        clock.advance(0.15)
        again = hub.apply(claim(clock, "hook", activity="blocked", event=event, fields=asks))
        assert events(again) == ["updated"]
        assert (current(hub).activity_event, current(hub).pending) == (event, request)
    clock.advance(1)
    other = {"pending": {"summary": "Bash: rm -rf build", "tool": "Bash"}}
    assert events(hub.apply(claim(clock, "hook", activity="blocked", fields=other))) == ["attention"]
    assert current(hub).pending["id"] != request["id"]


def test_the_same_request_from_a_higher_source_or_a_new_one_from_another(hub: Roster, clock: Clock) -> None:
    """The id decides, whoever says it: another source's request is another wait."""
    hub.apply(claim(clock, "hook", activity="blocked", fields={"pending": {"id": "a1", "summary": "x"}}))
    same = hub.apply(
        claim(clock, "acp", activity="blocked", fields={"pending": {"id": "a1", "summary": "x"}})
    )
    assert events(same) == ["updated"]
    other = hub.apply(
        claim(clock, "acp", activity="blocked", fields={"pending": {"id": "b2", "summary": "x"}})
    )
    assert events(other) == ["attention"]


def test_a_repeated_request_with_a_rename_is_only_renamed(hub: Roster, clock: Clock) -> None:
    asks = {"pending": {"summary": "Bash: npm test"}}
    hub.apply(claim(clock, "hook", activity="blocked", fields=asks))
    assert events(hub.apply(claim(clock, "hook", activity="blocked", fields={**asks, "name": "x"}))) == [
        "renamed"
    ]


def test_renaming_emits_renamed(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "hook", activity="working"))
    assert events(hub.apply(claim(clock, "launcher", fields={"name": "api"}))) == ["renamed"]
    assert events(hub.apply(claim(clock, "launcher", fields={"name": "api"}))) == []
    assert events(hub.apply(claim(clock, "launcher", fields={"name": "api", "cwd": "/src"}))) == []


def test_a_rename_with_an_activity_emits_both_in_order(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "hook", activity="working"))
    assert events(hub.apply(claim(clock, "hook", activity="blocked", fields={"name": "x"}))) == [
        "renamed",
        "attention",
    ]


def test_a_plan_mode_usage_or_recap_of_its_own_is_updated(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "hook", activity="working"))
    for fields in (
        {"usage": {"input_tokens": 10}, "mode": "plan"},
        {"plan": {"entries": []}},
        {"recap": "done"},
    ):
        assert events(hub.apply(claim(clock, "acp", fields=fields))) == ["updated"]


def test_other_fields_change_the_record_but_emit_nothing(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "hook", activity="working"))
    revision = current(hub).revision
    outcome = hub.apply(claim(clock, "scan", fields={"tty": "/dev/pts/9", "load": {"cpu": 1.0}}))
    assert outcome.changes == ()
    assert current(hub).revision == revision + 1


def test_suspending_emits_session_suspended(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "acp", activity="idle"))
    assert events(hub.apply(claim(clock, "acp", fields={"liveness": "suspended"}))) == ["session_suspended"]
    assert current(hub).liveness == "suspended"


class TestEnding:
    def test_ending_emits_session_ended_with_the_reason(self, hub: Roster, clock: Clock) -> None:
        hub.apply(claim(clock, "hook", activity="blocked"))
        clock.advance(5)
        outcome = hub.apply(claim(clock, "scan", ended="crash"))
        assert events(outcome) == ["session_ended"], "an ended session needs no attention_cleared"
        record = current(hub)
        assert (record.liveness, record.ended_reason, record.ended_at) == ("ended", "crash", clock.now)

    def test_an_ended_session_stays_until_the_linger_passes_then_is_dropped_silently(
        self, hub: Roster, clock: Clock
    ) -> None:
        hub.apply(claim(clock, "hook", activity="working"))
        hub.apply(claim(clock, "scan", ended="exit"))
        assert hub.deadline() == clock.now + 30
        clock.advance(29.9)
        assert hub.tick() == () and hub.record(key()) is not None
        clock.advance(0.1)
        assert hub.tick() == ()
        assert hub.record(key()) is None and hub.records() == [] and hub.explain(key()) is None

    def test_claims_for_an_ended_session_are_refused(self, hub: Roster, clock: Clock) -> None:
        hub.apply(claim(clock, "hook", activity="working"))
        hub.apply(claim(clock, "scan", ended="exit"))
        outcome = hub.apply(claim(clock, "hook", activity="idle"))
        assert (outcome.accepted, outcome.reasons) == (False, (f"session {key()} has ended",))
        by_key = hub.apply(claim(clock, "hook", process=None, session_key=key(), activity="idle"))
        assert by_key.reasons == (f"session {key()} has ended",)

    def test_a_late_claim_cannot_bring_a_dropped_session_back(self, hub: Roster, clock: Clock) -> None:
        hub.apply(claim(clock, "hook", activity="working"))
        hub.apply(claim(clock, "scan", ended="exit"))
        clock.advance(60)
        hub.tick()
        for late in (
            claim(clock, "hook", activity="idle"),
            claim(clock, "hook", process=None, session_key=key()),
        ):
            outcome = hub.apply(late)
            assert (outcome.accepted, outcome.reasons) == (False, (f"session {key()} has ended",))
        assert hub.records() == []

    def test_ending_a_session_nobody_knew_is_refused(self, hub: Roster, clock: Clock) -> None:
        outcome = hub.apply(claim(clock, "scan", ended="exit"))
        assert (outcome.accepted, outcome.reasons) == (False, (f"unknown session {key()}: nothing to end",))
        assert hub.records() == []

    def test_any_source_may_end_a_session(self, hub: Roster, clock: Clock) -> None:
        hub.apply(claim(clock, "launcher", fields={"name": "api"}))
        assert events(hub.apply(claim(clock, "scan", ended="exit"))) == ["session_ended"]


def record(activity: str = "idle", seq: int = 0, **kw: Any) -> Record:
    return Record("n", "id", "id:1:1", 1, 1, 0.0, activity=activity, activity_seq=seq, **kw)


def test_transitions_is_a_pure_function_of_two_records() -> None:
    assert changes.transitions(None, record()) == ["session_started"]
    assert changes.transitions(None, record(liveness="ended")) == []
    assert changes.transitions(record(), record()) == []
    assert changes.transitions(record(seq=1), record(seq=2)) == ["activity"]
    assert changes.transitions(record(), record(liveness="stale")) == []
    assert changes.transitions(record("needs_attention"), record(liveness="ended")) == ["session_ended"]
    waits = {"pending": {"id": "r1"}}
    assert changes.transitions(
        record("needs_attention", 1, **waits), record("needs_attention", 2, **waits)
    ) == ["updated"]
    assert changes.transitions(record("needs_attention", 1), record("needs_attention", 2)) == ["attention"]
    assert changes.transitions(record("idle", 1, **waits), record("needs_attention", 2, **waits)) == [
        "attention"
    ]


def test_a_change_serialises_with_its_seq_name_epoch_and_record(hub: Roster, clock: Clock) -> None:
    [change] = hub.apply(claim(clock, "hook", activity="working")).changes
    doc = json.loads(json.dumps(change.to_json()))
    assert doc["seq"] == 1 and doc["event"] == "session_started" and doc["status_epoch"] == 7
    assert doc["at"] == "2023-11-14T22:13:20.000Z"
    assert doc["session_key"] == key() == doc["record"]["session_key"]
    assert doc["record"]["activity"] == "active"


def test_change_seqs_are_global_across_sessions(hub: Roster, clock: Clock) -> None:
    seqs = []
    for pid in (1, 2, 3):
        seqs += [change.seq for change in hub.apply(claim(clock, "hook", process=ProcessId(pid, 1))).changes]
        seqs += [
            change.seq
            for change in hub.apply(claim(clock, "hook", process=ProcessId(pid, 1), activity="idle")).changes
        ]
    assert seqs == list(range(1, 7)) and hub.head == 6


def test_a_session_that_learns_its_pane_is_updated(hub: Roster, clock: Clock) -> None:
    """An agent's hook may claim before the scan has found its pane: the pane it learns then is
    news to every client (a web app shows a pane's session only once it knows the pane)."""
    hub.apply(claim(clock, "hook", activity="idle"))
    where = {"lane": "interactive", "tmux": {"socket": "s", "pane": "%1"}}
    assert events(hub.apply(claim(clock, "scan", fields=where))) == ["updated"]
    assert events(hub.apply(claim(clock, "scan", fields=where))) == []
