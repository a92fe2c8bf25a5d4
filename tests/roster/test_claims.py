"""A claim's shape: what is accepted off the wire, and the reason given for what is not."""

from __future__ import annotations

from typing import Any

import pytest

from roost.truth.roster import BadClaim, Claim, ProcessId, Roster, check, parse
from roost.truth.roster.precedence import SOURCES

NOW = 1_700_000_000.0
P = ProcessId(10, 20)


def ok(**kw: Any) -> Claim:
    return Claim(**{"source": "hook", "received_at": NOW, "process": P, **kw})


DEEP: dict[str, Any] = {}
_inner = DEEP
for _ in range(20):
    _inner["next"] = {}
    _inner = _inner["next"]

# Malformed claims and a fragment of the reason each is refused with.
BAD = [
    ({"source": "gossip"}, "source must be one of launcher, acp"),
    ({"received_at": float("nan")}, "received_at"),
    ({"process": None}, "names a session_key or a process"),
    ({"process": None, "session_key": ""}, "session_key must be text of 1 to 256"),
    ({"process": ProcessId(0, 1)}, "pid must be a positive integer"),
    ({"process": ProcessId(True, 1)}, "pid must be a positive integer"),
    ({"process": ProcessId(1, -1)}, "start_ticks must be a non-negative"),
    ({"process": ProcessId(10**30, 1)}, "pid must be a positive integer up to 4194304"),
    ({"process": ProcessId(1, 2**64)}, "start_ticks must be a non-negative integer up to"),
    ({"started_at": 1e20}, "started_at must be a time after 1970"),
    ({"started_at": -1e12}, "started_at must be a time after 1970"),
    ({"started_at": float("nan")}, "started_at must be a time after 1970"),
    ({"started_at": NOW + 2 * 86_400}, "no more than a day after the claim arrived"),
    ({"fields": {"name": "\ud800"}}, "fields.name holds text that is not valid Unicode"),
    (
        {"fields": {"name": "x\x1b]0;pwned\x07"}},
        "fields.name is one line and may not hold control characters (U+001B)",
    ),
    ({"fields": {"name": "a\nb"}}, "(U+000A)"),
    ({"fields": {"name": "\u202eevil"}}, "(U+202E)"),
    ({"fields": {"name": "\u0085"}}, "(U+0085)"),
    ({"fields": {"harness": "claude\x00"}}, "fields.harness is one line"),
    ({"fields": {"cwd": "/tmp/\udcff"}}, "fields.cwd holds text that is not valid Unicode"),
    ({"fields": {"usage": {"cost": float("inf")}}}, "fields.usage holds a number that is not finite"),
    ({"fields": {"plan": {"a": [{"b": "\ud800"}]}}}, "fields.plan holds text that is not valid Unicode"),
    ({"fields": {"plan": DEEP}}, "fields.plan nests deeper than 16 levels"),
    ({"event": "Stop\x1b[2J"}, "event is one line and may not hold control characters (U+001B)"),
    ({"process": None, "session_key": "k", "ancestors": (P,)}, "ancestors are only meaningful"),
    ({"ancestors": (ProcessId(1, "x"),)}, "start_ticks"),  # type: ignore[arg-type]
    ({"activity": "unknown"}, "activity must be one of active, blocked, done"),
    ({"activity": "sleeping"}, "activity must be one of active, blocked, done"),
    ({"event": ""}, "event must be an event word of 1 to 64 characters"),
    ({"event": "x" * 65}, "event must be an event word of 1 to 64 characters"),
    ({"seq": -1}, "seq must be a non-negative integer"),
    ({"seq": 1.5}, "seq must be a non-negative integer"),
    ({"occupant_id": 0}, "occupant_id must be a positive integer"),
    ({"ended": "vanished"}, "ended must be one of exit, crash, reboot, killed, expired"),
    ({"ended": "exit", "activity": "idle"}, "ends a session carries no activity"),
    ({"fields": {"activity_seq": 3}}, "fields.activity_seq cannot be set by a claim"),
    ({"fields": {"session_key": "x"}}, "fields.session_key cannot be set"),
    ({"fields": {"name": 5}}, "fields.name must be text of at most 200 characters, one line"),
    ({"fields": {"name": "n" * 201}}, "fields.name must be text of at most 200 characters"),
    ({"fields": {"lane": "remote"}}, "fields.lane must be one of headless, interactive"),
    ({"fields": {"liveness": "ended"}}, "fields.liveness must be one of live, stale, suspended"),
    ({"fields": {"permission_policy": "yolo"}}, "fields.permission_policy must be one of auto, attention"),
    ({"fields": {"tmux": "%3"}}, "fields.tmux must be a JSON object"),
    ({"fields": {"pending": {"tool": "Bash"}}}, "fields.pending travels only with an activity"),
    ({"fields": {"error_reason": "boom"}}, "fields.error_reason travels only with an activity"),
]


@pytest.mark.parametrize(("changes", "reason"), BAD, ids=[reason for _, reason in BAD])
def test_malformed_claims_are_refused_with_a_reason(changes: dict[str, Any], reason: str) -> None:
    problem = check(ok(**changes))
    assert problem is not None and reason in problem


@pytest.mark.parametrize("source", SOURCES)
def test_every_source_may_claim(source: str) -> None:
    assert check(ok(source=source)) is None


@pytest.mark.parametrize("word", ["active", "idle", "needs_attention", "working", "blocked", "done", "error"])
def test_both_vocabularies_may_be_claimed(word: str) -> None:
    assert check(ok(activity=word)) is None


def test_a_null_field_withdraws_and_is_always_well_formed() -> None:
    assert check(ok(fields={"name": None, "tmux": None, "lane": None})) is None


def test_the_error_word_keeps_its_reason_beside_an_idle_activity() -> None:
    assert ok(activity="error", event="StopFailure").activity_word == "idle"
    assert ok(activity="error", event="StopFailure").error_reason == "StopFailure"
    assert ok(activity="error").error_reason == "error"
    assert ok(activity="error", fields={"error_reason": "rate limited"}).error_reason == "rate limited"
    assert ok(activity="working").error_reason is None


def test_parse_reads_the_wire_shape() -> None:
    claim = parse(
        {
            "source": "scan",
            "pid": 10,
            "start_ticks": 20,
            "ancestors": [[9, 19], {"pid": 1, "start_ticks": 0}],
            "activity": "active",
            "event": "tool_call",
            "seq": 4,
            "occupant_id": 2,
            "fields": {"cwd": "/src", "tmux": {"session": "main", "pane_id": "%1"}},
            "started_at": "2023-11-14T22:13:20Z",
            "some_future_key": True,
        },
        received_at=NOW,
    )
    assert claim.process == P and claim.ancestors == (ProcessId(9, 19), ProcessId(1, 0))
    assert (claim.activity, claim.event, claim.seq, claim.occupant_id) == ("active", "tool_call", 4, 2)
    assert claim.fields == {"cwd": "/src", "tmux": {"session": "main", "pane_id": "%1"}}
    assert claim.started_at == NOW and claim.received_at == NOW


def test_parse_copies_fields_so_a_sender_cannot_change_a_claim_later() -> None:
    tmux = {"pane_id": "%1"}
    claim = parse({"source": "hook", "session_key": "k", "fields": {"tmux": tmux}}, received_at=NOW)
    tmux["pane_id"] = "%9"
    assert claim.fields["tmux"] == {"pane_id": "%1"}


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ([], "a claim is a JSON object"),
        ({"source": "hook", "pid": 1}, "pid and start_ticks come together"),
        (
            {"source": "hook", "pid": 1, "start_ticks": 2, "ancestors": {"pid": 1}},
            "ancestors must be a list of up to 64 processes",
        ),
        (
            {"source": "hook", "pid": 1, "start_ticks": 2, "ancestors": [[1]]},
            "ancestors.0 must be a process: {pid, start_ticks}",
        ),
        ({"source": "hook", "session_key": "k", "fields": []}, "fields must be an object of record fields"),
        ({"source": "hook", "session_key": "k", "started_at": "yesterday"}, "started_at must be a date-time"),
        ({"source": "hook", "session_key": "k", "fields": {"colour": "red"}}, "fields.colour cannot be set"),
        ({"source": None, "session_key": "k"}, "source must be one of"),
    ],
)
def test_parse_refuses_bad_payloads_with_the_reason(payload: Any, reason: str) -> None:
    with pytest.raises(BadClaim, match=reason):
        parse(payload, received_at=NOW)


def test_a_parsed_claim_applies_to_the_roster() -> None:
    hub = Roster("gibson", "n0de", lambda: NOW, status_epoch=1)
    payload = {"source": "hook", "pid": 10, "start_ticks": 20, "activity": "blocked", "event": "permission"}
    outcome = hub.apply(parse(payload, received_at=NOW))
    assert outcome.accepted and outcome.session_key == "n0de:10:20"
    assert [change.event for change in outcome.changes] == ["session_started", "attention"]


@pytest.mark.parametrize(
    ("said", "activity", "state"),
    [
        ("working", "active", "working"),
        ("blocked", "needs_attention", "blocked"),
        ("done", "idle", "done"),
        ("idle", "idle", "idle"),
        ("error", "idle", "error"),
        ("active", "active", "working"),
        ("needs_attention", "needs_attention", "blocked"),
    ],
)
def test_a_record_keeps_the_state_in_roosts_words_beside_the_activity(
    said: str, activity: str, state: str
) -> None:
    """rosterd's activity says ``idle`` for done, idle and error alike; the record's ``state``
    keeps which, so every face can say it in the one set of words a person reads."""
    roster = Roster("test", "n0", lambda: NOW, status_epoch=1)
    roster.apply(ok(activity=said, fields={"error_reason": "boom"} if said == "error" else {}))
    record = roster.record(roster.find(P) or "")
    assert record is not None and (record.activity, record.state) == (activity, state)


def test_a_session_with_no_activity_has_no_state() -> None:
    roster = Roster("test", "n0", lambda: NOW, status_epoch=1)
    roster.apply(ok(fields={"harness": "claude"}))
    record = roster.record(roster.find(P) or "")
    assert record is not None and (record.activity, record.state) == ("unknown", None)
