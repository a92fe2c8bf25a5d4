"""The record on the wire: every field present, timestamps in one format, unknown fields ignored."""

from __future__ import annotations

import dataclasses
import json

import pytest

from roost.pane.state import words
from roost.truth.roster import records
from roost.truth.roster.records import Record, from_json, snapshot_document, to_json
from roost.truth.roster.times import from_wire, to_wire

# The rosterd.snapshot.v1 record as clients read it: field name -> value when nobody knows.
WIRE_FIELDS = {
    "node": "gibson",
    "node_id": "n0de",
    "session_key": "n0de:4242:1000",
    "pid": 4242,
    "start_ticks": 1000,
    "started_at": "2023-11-14T22:13:20.000Z",
    "harness": None,
    "session_id": None,
    "lane": None,
    "sources": [],
    "name": None,
    "activity": "unknown",
    "activity_event": None,
    "activity_at": None,
    "activity_seq": 0,
    "error_reason": None,
    "parent_session_key": None,
    "cwd": None,
    "tty": None,
    "tmux": None,
    "holder": None,
    "liveness": "live",
    "ended_at": None,
    "ended_reason": None,
    "status_epoch": 0,
    "occupant_id": 0,
    "revision": 0,
    "completed_revision": None,
    "usage": None,
    "load": None,
    "mode": None,
    "plan": None,
    "permission_policy": None,
    "recap": None,
    "pending": None,
    "model": None,
    "handed_to": None,
    "state": None,
    "spend": None,
    "budget": None,
}


def bare() -> Record:
    return Record("gibson", "n0de", "n0de:4242:1000", 4242, 1000, 1_700_000_000.0)


def test_session_key_is_node_id_pid_and_start_ticks() -> None:
    assert records.session_key("n0de", 4242, 1000) == "n0de:4242:1000"


def test_a_bare_record_has_every_field_present_and_null() -> None:
    assert to_json(bare()) == WIRE_FIELDS
    assert list(to_json(bare())) == list(WIRE_FIELDS)


def test_a_record_serialises_to_plain_json_with_rfc3339_timestamps() -> None:
    record = bare().replace(
        activity="active",
        activity_at=1_700_000_001.5,
        sources=("hook", "scan"),
        tmux={"session": "main", "window_index": 1, "window_name": "api", "pane_id": "%3"},
        liveness="ended",
        ended_at=1_700_000_002.0,
        ended_reason="exit",
    )
    doc = json.loads(json.dumps(to_json(record)))
    assert doc["activity_at"] == "2023-11-14T22:13:21.500Z"
    assert doc["ended_at"] == "2023-11-14T22:13:22.000Z"
    assert doc["sources"] == ["hook", "scan"]
    assert from_json(doc) == record


def test_a_record_writes_what_asdict_would_and_its_nested_documents_are_copies() -> None:
    record = bare().replace(
        sources=("hook",),
        tmux={"session": "main", "pane": "%3"},
        pending={"summary": "Bash: ls", "options": [{"id": "allow", "keys": ["y", "Enter"]}]},
        plan={"entries": [{"content": "a", "status": "pending"}]},
    )
    expected = dataclasses.asdict(record)
    expected["sources"] = ["hook"]
    for name in records.TIMESTAMPS:
        expected[name] = to_wire(expected[name])
    doc = to_json(record)
    assert doc == expected and list(doc) == list(WIRE_FIELDS)
    doc["pending"]["options"][0]["keys"].append("q")
    doc["tmux"]["pane"] = "%9"
    assert record.pending["options"][0]["keys"] == ["y", "Enter"] and record.tmux["pane"] == "%3"


def test_reading_ignores_unknown_fields_and_fills_missing_ones() -> None:
    doc = {
        "node": "gibson",
        "node_id": "n0de",
        "session_key": "n0de:1:2",
        "pid": 1,
        "start_ticks": 2,
        "started_at": "2023-11-14T22:13:20Z",
        "activity": "idle",
        "herdr": {"pane_id": "x"},
        "future_field": [1, 2, 3],
    }
    record = from_json(doc)
    assert record.activity == "idle"
    assert record.name is None and record.liveness == "live" and record.sources == ()
    assert set(to_json(record)) == set(WIRE_FIELDS)


def test_reading_copies_objects_so_the_record_does_not_share_the_callers_dicts() -> None:
    doc = to_json(bare().replace(usage={"input_tokens": 3}))
    record = from_json(doc)
    doc["usage"]["input_tokens"] = 99
    assert record.usage == {"input_tokens": 3}


@pytest.mark.parametrize("missing", ["node", "node_id", "session_key", "pid", "start_ticks", "started_at"])
def test_reading_a_record_without_its_identity_says_which_field(missing: str) -> None:
    doc = to_json(bare())
    del doc[missing]
    with pytest.raises(ValueError, match=missing):
        from_json(doc)


# The ARCHITECTURE table "One state, three vocabularies", internal word -> rosterd activity.
@pytest.mark.parametrize(
    ("word", "activity"),
    [
        (words.WORKING, "active"),
        (words.BLOCKED, "needs_attention"),
        (words.DONE, "idle"),
        (words.IDLE, "idle"),
        (words.ERROR, "idle"),
        ("active", "active"),
        ("needs_attention", "needs_attention"),
        ("idle", "idle"),
    ],
)
def test_internal_state_words_map_to_activity_words(word: str, activity: str) -> None:
    assert records.to_activity(word) == activity


def test_every_internal_state_word_has_an_activity() -> None:
    assert set(records.ACTIVITY_OF_STATE) == set(words.STATES)


def test_snapshot_document_carries_the_schema_marker() -> None:
    doc = snapshot_document("gibson", "n0de", 7, 12, 1_700_000_000.0, [bare()])
    assert doc["schema"] == "rosterd.snapshot.v1"
    assert (doc["node"], doc["node_id"], doc["status_epoch"], doc["seq"]) == ("gibson", "n0de", 7, 12)
    assert doc["generated_at"] == "2023-11-14T22:13:20.000Z"
    assert doc["records"] == [WIRE_FIELDS]


def test_timestamps_round_trip_and_accept_offsets_and_numbers() -> None:
    assert from_wire(to_wire(1_700_000_000.25)) == 1_700_000_000.25
    assert from_wire("2023-11-14T23:13:20+01:00") == 1_700_000_000.0
    assert from_wire(1_700_000_000) == 1_700_000_000.0
    assert to_wire(None) is None and from_wire(None) is None
    with pytest.raises(ValueError):
        from_wire(["not", "a", "time"])


def test_a_peers_records_keep_no_dict_each_and_one_copy_of_their_repeated_values() -> None:
    """A swarm of 1,000 nodes of 50 sessions holds 50,000 of its peers' records, each read afresh
    from JSON: a record is slotted (no ``__dict__``), and the fields whose few values records
    repeat (node, harness, lane, state words, folder…) point at one string each."""
    from roost.truth.roster.recordschema import SHARED, from_peer

    def read(pid: int) -> Record:
        doc = {
            "node": "gibson", "node_id": "n0de", "session_key": f"n0de:{pid}:1000", "pid": pid,
            "start_ticks": 1000, "started_at": "2023-11-14T22:13:20.000Z", "harness": "claude",
            "lane": "interactive", "activity": "idle", "activity_event": "Stop", "state": "done",
            "cwd": "/home/dev/project", "model": "claude-sonnet-4-6",
        }  # fmt: skip
        return from_peer(json.loads(json.dumps(doc)), "n0de")

    first, second = read(1), read(2)
    assert not hasattr(first, "__dict__")
    shared = [name for name in SHARED if getattr(first, name) is not None]
    assert len(shared) == 10
    assert [name for name in shared if getattr(first, name) is not getattr(second, name)] == []
    assert first.session_key is not second.session_key
