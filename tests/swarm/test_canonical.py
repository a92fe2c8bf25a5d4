"""Canonical JSON and signed documents: one spelling per value, unknown fields covered and
kept, strict parsing of what a peer sends."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roost.remote.swarm import canonical
from tests.conftest import examples
from tests.swarm.helpers import node

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def test_keys_sorted_no_spaces_text_as_utf8() -> None:
    assert canonical.encode({"b": 1, "a": [True, None, "é"]}) == '{"a":[true,null,"é"],"b":1}'.encode()


@settings(max_examples=examples(200), deadline=None, database=None)
@given(JSON)
def test_one_value_one_spelling_and_it_parses_back(value: object) -> None:
    data = canonical.encode(value)
    assert canonical.parse(data) == value
    assert canonical.encode(json.loads(data)) == data


@pytest.mark.parametrize("value", [1.5, {"a": float("nan")}, {1: "a"}, b"bytes", ("tuple",), "\ud800"])
def test_what_has_no_canonical_form_is_refused(value: object) -> None:
    with pytest.raises(ValueError):
        canonical.encode(value)


@pytest.mark.parametrize(
    "text",
    ['{"a":1,"a":2}', '{"a":1.0}', '{"a":NaN}', '{"a":Infinity}', "[" * 17 + "]" * 17, '{"a":1} x', b"\xff"],
)
def test_a_peer_document_is_parsed_strictly(text: str | bytes) -> None:
    with pytest.raises(ValueError):
        canonical.parse(text)


def test_a_document_too_large_is_refused_before_parsing() -> None:
    with pytest.raises(ValueError, match="larger"):
        canonical.parse(b'"' + b"a" * canonical.MAX_DOCUMENT + b'"')


def test_brackets_inside_text_do_not_count_as_nesting() -> None:
    assert canonical.parse('{"a":"' + "[" * 40 + '"}') == {"a": "[" * 40}


def _nesting(value: object) -> int:
    if isinstance(value, list):
        return 1 + max(map(_nesting, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_nesting, value.values()), default=0)
    return 0


TEXT = st.text(alphabet=st.sampled_from('ab"\\[]{}\né\x00'), max_size=8)
BRACKETED = st.recursive(
    st.none() | st.integers() | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=24,
)


@settings(max_examples=examples(300), deadline=None, database=None)
@given(BRACKETED, st.booleans())
def test_the_nesting_counted_before_parsing_is_the_nesting_parsed(value: object, ascii_only: bool) -> None:
    """Quotes, backslashes and brackets inside text, escaped or not, never move the count: a
    closing bracket in a string must not hide a level, nor an escaped quote end a string."""
    data = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert canonical._depth(data) == _nesting(value)


def test_closing_brackets_in_strings_do_not_hide_nesting_past_the_limit() -> None:
    level = r'[ "\\\"]]]",'  # a string of an escaped backslash, an escaped quote and "]]]"
    hidden = level * (canonical.MAX_DEPTH + 1) + "1" + "]" * (canonical.MAX_DEPTH + 1)
    assert canonical._depth(hidden.encode()) == canonical.MAX_DEPTH + 1
    with pytest.raises(ValueError, match="nested deeper"):
        canonical.parse(hidden)


def test_a_signed_document_verifies_and_unknown_fields_are_covered_and_kept() -> None:
    alpha = node("alpha")
    signed = canonical.sign({"x": 1, "future_field": {"nested": [1, 2]}}, alpha)
    passed_on = canonical.parse(canonical.encode(signed))  # an older node keeps what it does not know
    assert isinstance(passed_on, dict) and canonical.verified(passed_on, alpha.public_key)
    assert not canonical.verified({**passed_on, "future_field": {"nested": [1]}}, alpha.public_key)
    assert not canonical.verified({**passed_on, "added": 1}, alpha.public_key)
    assert not canonical.verified(
        {k: v for k, v in passed_on.items() if k != "future_field"}, alpha.public_key
    )
    assert not canonical.verified(passed_on, node("beta").public_key)


@pytest.mark.parametrize("signature", [None, "", "AAAA", 12, "A" * 86])
def test_a_missing_or_malformed_signature_never_verifies(signature: object) -> None:
    alpha = node("alpha")
    document = {"x": 1, "signature": signature}
    assert not canonical.verified(document, alpha.public_key)


def test_signing_replaces_an_old_signature() -> None:
    alpha = node("alpha")
    again = canonical.sign(canonical.sign({"x": 1}, node("beta")), alpha)
    assert canonical.verified(again, alpha.public_key)
