"""``roost.base.cjson`` gives what ``json`` gives, for every document the hook and its caches read."""

from __future__ import annotations

import json
import math

import pytest

from roost.base import cjson

DOCUMENTS = [
    b'{"hook_event_name": "PreToolUse", "tool_input": {"command": "ls"}, "n": [1, 2.5, -3e2]}',
    b'  \n\t{"a": {"b": [true, false, null]}}\r\n ',
    b'"a string"',
    b"[1, 2, 3]",
    b"12345678901234567890123456789",
    b"[NaN, Infinity, -Infinity, 1e400]",
    '{"caf\\u00e9": "\u2713 ünïcode", "emoji": "\\ud83d\\ude00"}'.encode(),
    b'{"lone surrogate": "\\ud800"}',
    b'\xef\xbb\xbf{"with": "a byte-order mark"}',
    '{"in": "utf-16"}'.encode("utf-16"),
    '{"in": "utf-32"}'.encode("utf-32"),
]

NOT_JSON = [
    b"",
    b"   ",
    b"not json",
    b'{"a": 1} trailing',
    b'{"a": }',
    b'{"a": 1,}',
    b"[1, 2",
    b"\xff",
    b'"\x01"',
]


@pytest.mark.parametrize("data", DOCUMENTS)
def test_loads_gives_what_json_gives(data: bytes) -> None:
    assert repr(cjson.loads(data)) == repr(json.loads(data))


def test_loads_takes_text_too() -> None:
    assert cjson.loads(' {"a": [1]} ') == {"a": [1]}


@pytest.mark.parametrize("data", NOT_JSON)
def test_what_json_refuses_is_a_value_error(data: bytes) -> None:
    with pytest.raises(ValueError):
        json.loads(data)
    with pytest.raises(ValueError):
        cjson.loads(data)


VALUES = [
    {
        "source": "hook",
        "pid": 7,
        "ancestors": [[1, 2]],
        "fields": {"pending": {"summary": "Ask: Which?"}},
    },
    {"text": "café\n\x00\u2713", "n": [1, 2.5, -0.0, 10**30], "ok": True, "none": None},
    {1: "int key", 2.5: "float key", None: "null key", False: "bool key"},
    ["NaN", math.inf, -math.inf, 1e-300],
    "\ud800",
    {"schema": 1, "command": "read", "text": "✅ done \U0001f600", "empty": {}, "list": []},
]


@pytest.mark.parametrize("value", VALUES)
def test_document_gives_what_json_gives_as_roost_writes_it(value: object) -> None:
    """The one writer of JSON documents: ``--json`` answers, events-log lines, files."""
    assert cjson.document(value) == json.dumps(value, ensure_ascii=False) + "\n"
    compact = json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"
    assert cjson.document(value, compact=True) == compact
    for indent in (2, "\t"):
        assert (
            cjson.document(value, indent=indent)
            == json.dumps(value, ensure_ascii=False, indent=indent) + "\n"
        )


@pytest.mark.parametrize("value", [{"a": {1, 2}}, object()])
def test_document_refuses_what_json_cannot_hold(value: object) -> None:
    with pytest.raises(TypeError):
        cjson.document(value)


@pytest.mark.parametrize("value", [v for v in VALUES if "schema" not in v])
def test_dumps_gives_what_compact_json_gives(value: object) -> None:
    assert cjson.dumps(value) == json.dumps(value, separators=(",", ":"))


@pytest.mark.parametrize("value", [{"a": {1, 2}}, object(), {(1, 2): "tuple key"}])
def test_what_json_cannot_hold_is_a_type_error(value: object) -> None:
    with pytest.raises(TypeError):
        json.dumps(value)
    with pytest.raises(TypeError):
        cjson.dumps(value)


def test_a_value_that_holds_itself_is_refused_as_json_refuses_it() -> None:
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        cjson.dumps({"loop": loop})
    assert cjson.dumps({"after": [loop[:0]]}) == '{"after":[[]]}'


def test_dumps_then_loads_round_trips() -> None:
    value = {
        "table": {"hook": {"events": {"Stop": "done"}, "summaries": {"Ask": ["questions", 0, "question"]}}}
    }
    assert cjson.loads(cjson.dumps(value)) == value
