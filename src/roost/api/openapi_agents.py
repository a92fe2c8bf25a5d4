"""The OpenAPI description of the routes ``roost api`` uses: status rows, waits, prompts and raw
input. Kept beside :mod:`roost.api.openapi`, which merges it into ``/openapi.json``, so that
file stays one concept; the limits and words are read from the modules that enforce them."""

from __future__ import annotations

from typing import Any

from roost import agentrow
from roost.api import input, prompt, rows, waits

_ERRORS = {
    "400": "malformed request: bad JSON, a missing or bad field",
    "401": "TCP request without the right bearer token",
    "404": "no such session: missing or foreign (another tmux server's pane) alike",
    "409": "a pre-write rejection (see code); nothing was written",
    "413": "the text or data is over its limit, or the body is too large",
    "429": "too many open streams and waits",
    "503": "tmux failed to write",
}
_PREFIX = "#/components/schemas/"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": _PREFIX + name}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _responses(ok: dict[str, Any], *codes: str) -> dict[str, Any]:
    return {**ok, **{code: _json(_ref("Error"), _ERRORS[code]) for code in ("401", *codes)}}


def _session(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "description": "a pane (%N, percent-encoded as %25N), or a session key, pid or unique name in one",
        "schema": {"type": "string", "minLength": 1},
    }


def _body(schema: str) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": _ref(schema)}}}


_INT = {"type": "integer", "minimum": 0}
_UNTIL = {
    "type": "array",
    "minItems": 1,
    "uniqueItems": True,
    "items": {"type": "string", "enum": list(agentrow.STATES)},
}
_DEADLINE = {"type": "integer", "description": "Unix milliseconds, at most five minutes ahead"}


def schemas() -> dict[str, Any]:
    nullable_text = {"type": "string", "nullable": True}
    return {
        "Row": {
            "type": "object",
            "required": list(agentrow.FIELDS),
            "additionalProperties": False,
            "properties": {
                "session_id": {"type": "string"},
                "agent_id": nullable_text,
                "state": {"type": "string", "enum": list(agentrow.STATES)},
                "message": nullable_text,
                "status_epoch": _INT,
                "occupant_id": _INT,
                "source": {
                    "type": "string",
                    "nullable": True,
                    "enum": [rows.INTEGRATION_CLASS, rows.SCREEN_CLASS, None],
                },
                "revision": _INT,
                "completed_revision": _INT,
                "updated_at": {"type": "integer", "description": "Unix milliseconds"},
                "promptable": {"type": "boolean"},
            },
        },
        "Rows": {
            "type": "object",
            "required": ["agents"],
            "properties": {"agents": {"type": "array", "items": _ref("Row")}},
        },
        "WaitAsk": {
            "type": "object",
            "required": ["status_epoch", "occupant_id", "until", "deadline_ms"],
            "properties": {
                "status_epoch": _INT,
                "occupant_id": {"type": "integer", "minimum": 1},
                "until": _UNTIL,
                "deadline_ms": _DEADLINE,
                "after_revision": _INT,
            },
        },
        "WaitOutcome": {
            "type": "object",
            "required": ["outcome", "row"],
            "properties": {
                "session_id": {"type": "string"},
                "outcome": {"type": "string", "enum": list(waits.OUTCOMES)},
                "row": {**_ref("Row"), "nullable": True},
            },
        },
        "PromptAsk": {
            "type": "object",
            "required": ["text", "status_epoch", "occupant_id", "revision"],
            "properties": {
                "text": {
                    "type": "string",
                    "minLength": 1,
                    "description": f"at most {prompt.TEXT_LIMIT} UTF-8 bytes",
                },
                "status_epoch": _INT,
                "occupant_id": {"type": "integer", "minimum": 1},
                "revision": _INT,
                "deadline_ms": _DEADLINE,
                "wait": {
                    "type": "object",
                    "required": ["until"],
                    "properties": {"until": _UNTIL},
                    "description": "await an outcome after the write, until deadline_ms (then required)",
                },
            },
        },
        "PromptOutcome": {
            "type": "object",
            "required": ["session_id", "input", "code", "reason", "written_bytes"],
            "properties": {
                "session_id": {"type": "string"},
                "input": {"type": "string", "enum": [prompt.ACCEPTED, prompt.AMBIGUOUS, prompt.REJECTED]},
                "code": {"type": "string", "nullable": True},
                "reason": {"type": "string", "nullable": True, "maxLength": prompt.REASON_LIMIT},
                "written_bytes": {"type": "integer", "minimum": 0, "maximum": prompt.TEXT_LIMIT + 13},
                "wait": _ref("WaitOutcome"),
            },
        },
        "Input": {
            "type": "object",
            "required": ["data"],
            "properties": {"data": {"type": "string", "format": "byte", "description": "base64 bytes"}},
        },
        "InputResult": {
            "type": "object",
            "required": ["session_id", "written_bytes"],
            "properties": {
                "session_id": {"type": "string"},
                "written_bytes": {"type": "integer", "minimum": 1, "maximum": input.DATA_LIMIT},
            },
        },
    }


def paths() -> dict[str, Any]:
    return {
        "/agents": {
            "get": {
                "summary": "every status row (one per pane with an agent state), in session_id order",
                "responses": _responses({"200": _json(_ref("Rows"), "the rows")}),
            }
        },
        "/agents/{session}": {
            "get": {
                "summary": "one session's status row",
                "parameters": [_session("session")],
                "responses": _responses({"200": _json(_ref("Row"), "the row")}, "404", "409"),
            }
        },
        "/sessions/{key}/wait": {
            "post": {
                "summary": "await one pinned occupant's outcome (see WaitOutcome)",
                "parameters": [_session("key")],
                "requestBody": _body("WaitAsk"),
                "responses": _responses(
                    {"200": _json(_ref("WaitOutcome"), "the outcome")},
                    "400",
                    "404",
                    "409",
                    "413",
                    "429",
                ),
            }
        },
        "/sessions/{key}/prompt": {
            "post": {
                "summary": "write one fenced prompt while the pinned observation holds; optionally await it",
                "parameters": [_session("key")],
                "requestBody": _body("PromptAsk"),
                "responses": _responses(
                    {"200": _json(_ref("PromptOutcome"), "accepted or ambiguous (never retried)")},
                    "400",
                    "404",
                    "409",
                    "413",
                    "429",
                ),
            }
        },
        "/sessions/{key}/input": {
            "post": {
                "summary": "write raw bytes to a pane, unfenced",
                "parameters": [_session("key")],
                "requestBody": _body("Input"),
                "responses": _responses(
                    {"200": _json(_ref("InputResult"), "written")}, "400", "404", "409", "413", "503"
                ),
            }
        },
    }
