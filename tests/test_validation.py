"""The door's checks: one sentence per refusal, naming the field, never echoing the value; and
the OpenAPI document built from the very models that check."""

from __future__ import annotations

import time
from typing import Any

import pytest

from roost.base.validation import Invalid, validated
from roost.faces.api import openapi, schemas
from roost.faces.api.app import ROUTES
from roost.faces.api.web import ROUTES as WEB_ROUTES
from roost.faces.mcp.inputs import Listing
from roost.truth.roster.claimschema import ClaimBody

NOW = time.time()
PIN = {"status_epoch": 1, "occupant_id": 1, "revision": 0}


@pytest.mark.parametrize(
    ("model", "body", "field", "message"),
    [
        (
            ClaimBody,
            {"pid": 1, "start_ticks": 1, "ancestors": [{"pid": 0, "start_ticks": 1}]},
            "ancestors.0.pid",
            "ancestors.0.pid must be a positive integer up to 4194304",
        ),
        (ClaimBody, {"pid": "12", "start_ticks": 1}, "pid", "pid must be a positive integer up to 4194304"),
        (ClaimBody, {"session_key": "k", "seq": True}, "seq", "seq must be a non-negative integer"),
        (
            ClaimBody,
            {"session_key": "k", "fields": {"colour": 1}},
            "fields.colour",
            "fields.colour is not a field this body may hold",
        ),
        (ClaimBody, {"pid": 1}, "", "pid and start_ticks come together"),
        (schemas.Register, {}, "pid", "pid is required"),
        (
            schemas.Name,
            {"name": "a\u202eb"},
            "name",
            "name is one line and may not hold control characters (U+202E)",
        ),
        (
            schemas.Wait,
            {**PIN, "until": ["idle", "idle"], "deadline_ms": 0},
            "until",
            "until must be a nonempty list of distinct states from idle, working, blocked",
        ),
        (
            schemas.Wait,
            {**PIN, "until": ["idle"], "deadline_ms": int(NOW * 1000) + 600_000},
            "deadline_ms",
            "deadline_ms is more than five minutes ahead",
        ),
        (
            schemas.Prompt,
            {**PIN, "text": "x", "wait": {"until": ["idle"]}},
            "",
            'wait is {"until": [STATES]} and needs deadline_ms, when the wait ends',
        ),
        (schemas.Input, {"data": "!"}, "data", "data is not valid base64"),
        (
            schemas.Launch,
            {"cwd": "/", "agent": "claude", "command": "sh"},
            "",
            "give exactly one of agent (an agent's name) or command (a command line)",
        ),
        (schemas.Launch, {"cwd": "/", "agent": "claude", "shell": "sh"}, "shell", "shell is not a field"),
        (
            schemas.Subscribe,
            {"endpoint": "http://[::1", "keys": {}},
            "endpoint",
            "endpoint must be an http(s) URL",
        ),
        (schemas.Viewing, {"endpoint": "https://push.example/x"}, "session", "session is required"),
        # A field's description says what it does; the refusal says what its type takes.
        (
            schemas.Permission,
            {"option": "allow", "reason": ""},
            "reason",
            "reason must be text of 1 to 1000 characters",
        ),
        (schemas.Gate, {"claim": {}, "always": "yes"}, "always", "always must be true or false"),
        (Listing, {"include_ended": 1}, "include_ended", "include_ended must be true or false"),
    ],
)
def test_a_refusal_names_the_field_and_says_what_is_wanted(
    model: Any, body: dict[str, Any], field: str, message: str
) -> None:
    with pytest.raises(Invalid) as refused:
        validated(model, body, {"now": NOW, "received_at": NOW})
    assert refused.value.field == field
    assert str(refused.value).startswith(message)


@pytest.mark.parametrize(
    "body",
    [
        {**PIN, "text": "my secret plan\ud800"},
        {**PIN, "text": "my secret plan", "revision": "my secret plan"},
        {**PIN, "text": "my secret plan", "wait": "my secret plan", "deadline_ms": 0},
    ],
)
def test_a_refusal_never_repeats_the_value(body: dict[str, Any]) -> None:
    with pytest.raises(Invalid) as refused:
        validated(schemas.Prompt, body, {"now": NOW})
    assert "secret" not in str(refused.value)


def test_a_good_body_keeps_only_what_it_declared() -> None:
    body = validated(schemas.Register, {"pid": 7, "name": "n", "future": 1})
    assert body.model_fields_set == {"pid", "name"}
    assert not hasattr(body, "future")


def test_the_document_holds_the_models_that_check() -> None:
    doc = openapi.document((*ROUTES, *WEB_ROUTES))
    defs = doc["components"]["schemas"]
    for model in (*schemas.BODIES, ClaimBody):
        generated = model.model_json_schema(ref_template=openapi.REF)
        generated.pop("$defs", None)
        assert defs[model.__name__] == generated, model.__name__
    schemas_of = [
        op["requestBody"]["content"]["application/json"]["schema"]
        for ops in doc["paths"].values()
        for op in ops.values()
        if "requestBody" in op
    ]
    bodies = {ref["$ref"].rsplit("/", 1)[1] for schema in schemas_of for ref in schema.get("oneOf", [schema])}
    assert bodies == {model.__name__ for model in (*schemas.BODIES, ClaimBody)}
