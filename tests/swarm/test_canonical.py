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
