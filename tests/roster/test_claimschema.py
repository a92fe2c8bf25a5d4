"""A claim's rules across its fields are in its JSON Schema too, so the document says what the
model checks: for every body made of the values the rules are about, the schema and the model
(a client's claim, and a gate's) agree on whether it is a claim."""

from __future__ import annotations

from functools import cache
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from pydantic import BaseModel

from roost.base.validation import Invalid, validated
from roost.faces.api.schemas import GateClaim
from roost.truth.roster.claimschema import ClaimBody, RosterdClaim

ABSENT = object()
PARTS = {
    "source": st.sampled_from([ABSENT, "hook", "screen", "launcher", "acp"]),
    "session_key": st.sampled_from([ABSENT, None, "n0:1:2"]),
    "pid": st.sampled_from([ABSENT, None, 5]),
    "start_ticks": st.sampled_from([ABSENT, None, 7]),
    "ancestors": st.sampled_from([ABSENT, [], [{"pid": 1, "start_ticks": 1}]]),
    "activity": st.sampled_from([ABSENT, None, "working", "blocked", "needs_attention", "idle"]),
    "ended": st.sampled_from([ABSENT, None, "exit"]),
    "fields": st.sampled_from(
        [
            ABSENT,
            {},
            {"name": "x"},
            {"pending": {}},
            {"pending": None},
            {"error_reason": None},
            {"pending": {"summary": "rm -rf build"}},
            {"pending": {"id": "a"}},
            {"pending": {"answerable": True}},
        ]
    ),
}
BODIES = st.fixed_dictionaries(PARTS).map(lambda doc: {k: v for k, v in doc.items() if v is not ABSENT})


@cache
def checker(model: type[BaseModel]) -> Draft202012Validator:
    return Draft202012Validator(model.model_json_schema())


def agree(model: type[BaseModel], body: dict[str, Any]) -> None:
    schema = checker(model)
    try:
        validated(model, body, {"received_at": 1e9})
    except Invalid as refused:
        assert not schema.is_valid(body), (body, str(refused))
    else:
        assert schema.is_valid(body), (body, [e.message for e in schema.iter_errors(body)])


@settings(max_examples=600, deadline=None)
@given(BODIES)
def test_a_clients_claim(body: dict[str, Any]) -> None:
    agree(ClaimBody, body)


@settings(max_examples=600, deadline=None)
@given(BODIES)
def test_a_gates_claim(body: dict[str, Any]) -> None:
    agree(GateClaim, body)


def test_rosterds_own_sources_may_say_what_a_client_may_not() -> None:
    body = {
        "source": "launcher",
        "session_key": "n0:1:2",
        "activity": "blocked",
        "fields": {"pending": {"id": "a"}},
    }
    validated(RosterdClaim, body)
    assert not checker(ClaimBody).is_valid(body)
