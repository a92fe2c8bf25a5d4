"""``GET /openapi.json``: the API described as OpenAPI 3.0, by hand, so clients and fuzzers
know every route, parameter, body and error. A test checks it names every route the app has.

The record's schema is derived from :class:`roost.roster.Record` itself, so a field added to
the record cannot be forgotten here.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost import __version__
from roost.api import openapi_agents
from roost.api.body import LIMIT
from roost.roster import SOURCES, records
from roost.roster.changes import EVENTS
from roost.roster.claims import CLAIMABLE_WORDS

_NULLABLE_OBJECT = {"type": "object", "nullable": True, "additionalProperties": True}
_TYPES: dict[str, dict[str, Any]] = {
    "str": {"type": "string"},
    "str | None": {"type": "string", "nullable": True},
    "int": {"type": "integer"},
    "int | None": {"type": "integer", "nullable": True},
    "float": {"type": "number"},
    "float | None": {"type": "number", "nullable": True},
    "tuple[str, ...]": {"type": "array", "items": {"type": "string"}},
    "dict[str, Any] | None": _NULLABLE_OBJECT,
}


def _record_schema() -> dict[str, Any]:
    properties = {}
    for field in fields(records.Record):
        schema = dict(_TYPES[str(field.type)])
        if field.name in records.TIMESTAMPS:
            schema = {"type": "string", "format": "date-time", "nullable": field.name != "started_at"}
        properties[field.name] = schema
    properties["activity"] = {"type": "string", "enum": list(records.ACTIVITIES)}
    properties["liveness"] = {"type": "string", "enum": list(records.LIVENESS)}
    return {"type": "object", "required": list(properties), "properties": properties}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


_ERRORS = {
    "400": "malformed request: bad JSON, a bad field, a bad query parameter",
    "401": "TCP request without the right bearer token",
    "404": "no such session, process or route",
    "409": "the roster refused it (ended session, stale or replayed claim, ambiguous name)",
    "413": f"body larger than {LIMIT} bytes",
    "429": "too many open streams",
}


def _responses(ok: dict[str, Any], *codes: str) -> dict[str, Any]:
    return {**ok, **{code: _json(_ref("Error"), _ERRORS[code]) for code in ("401", *codes)}}


_KEY = {
    "name": "key",
    "in": "path",
    "required": True,
    "description": "a session key, a pid on this node, or a unique display name",
    "schema": {"type": "string", "minLength": 1},
}
_SSE = {"description": "server-sent events", "content": {"text/event-stream": {"schema": {"type": "string"}}}}


def _body(schema: str) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": _ref(schema)}}}


def _process_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["pid", "start_ticks"],
        "properties": {
            "pid": {"type": "integer", "minimum": 1},
            "start_ticks": {"type": "integer", "minimum": 0},
        },
    }


def _schemas() -> dict[str, Any]:
    result = {
        "type": "object",
        "required": ["accepted", "session_key", "reasons", "seq"],
        "properties": {
            "accepted": {"type": "boolean"},
            "session_key": {"type": "string", "nullable": True},
            "reasons": {"type": "array", "items": {"type": "string"}},
            "seq": {"type": "integer"},
            "record": {**_ref("Record")},
        },
    }
    return {
        "Error": {
            "type": "object",
            "required": ["error"],
            "properties": {"error": {"type": "string"}},
            "additionalProperties": True,
        },
        "Record": _record_schema(),
        "Snapshot": {
            "type": "object",
            "required": ["schema", "node", "node_id", "status_epoch", "seq", "generated_at", "records"],
            "properties": {
                "schema": {"type": "string", "enum": [records.SCHEMA]},
                "node": {"type": "string"},
                "node_id": {"type": "string"},
                "status_epoch": {"type": "integer"},
                "seq": {"type": "integer"},
                "generated_at": {"type": "string", "format": "date-time"},
                "records": {"type": "array", "items": _ref("Record")},
            },
        },
        "Change": {
            "type": "object",
            "required": ["seq", "event", "at", "status_epoch"],
            "properties": {
                "seq": {"type": "integer"},
                "event": {"type": "string", "enum": list(EVENTS)},
                "at": {"type": "string", "format": "date-time"},
                "status_epoch": {"type": "integer"},
                "session_key": {"type": "string"},
                "record": _ref("Record"),
                "snapshot": _ref("Snapshot"),
            },
        },
        "Explain": {
            "type": "object",
            "required": ["session_key", "fields", "rejected"],
            "additionalProperties": True,
        },
        "Status": {
            "type": "object",
            "required": ["node", "node_id", "status_epoch", "seq", "version", "counts"],
            "properties": {
                "node": {"type": "string"},
                "node_id": {"type": "string"},
                "status_epoch": {"type": "integer"},
                "seq": {"type": "integer"},
                "version": {"type": "string"},
                "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
            },
            "additionalProperties": True,
        },
        "Claim": {
            "type": "object",
            "description": "one observation; name the session by session_key or by pid and start_ticks",
            "properties": {
                "source": {"type": "string", "enum": [s for s in SOURCES if s not in ("acp", "integration")]},
                "session_key": {"type": "string", "minLength": 1},
                "pid": {"type": "integer", "minimum": 1},
                "start_ticks": {"type": "integer", "minimum": 0},
                "ancestors": {"type": "array", "items": _process_schema()},
                "activity": {"type": "string", "enum": sorted(CLAIMABLE_WORDS)},
                "event": {"type": "string", "minLength": 1, "maxLength": 64},
                "seq": {"type": "integer", "minimum": 0},
                "occupant_id": {"type": "integer", "minimum": 1},
                "fields": {"type": "object", "additionalProperties": True},
                "ended": {"type": "string", "enum": list(records.ENDED_REASONS)},
                "started_at": {"type": "string", "format": "date-time"},
            },
        },
        "ClaimResult": result,
        "Register": {
            "type": "object",
            "required": ["pid"],
            "properties": {
                "pid": {"type": "integer", "minimum": 1},
                "start_ticks": {"type": "integer", "minimum": 0},
                "harness": {"type": "string", "maxLength": 64},
                "session_id": {"type": "string", "maxLength": 256},
                "name": {"type": "string", "maxLength": 200},
                "cwd": {"type": "string", "maxLength": 4096},
                "lane": {"type": "string", "enum": list(records.LANES)},
                "tty": {"type": "string", "maxLength": 256},
                "tmux": {"type": "object", "additionalProperties": True},
                "permission_policy": {"type": "string", "enum": list(records.PERMISSION_POLICIES)},
                "mode": {"type": "string", "maxLength": 64},
            },
        },
        "Name": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 200, "nullable": True}},
        },
    }


def _paths() -> dict[str, Any]:
    return {
        "/snapshot": {
            "get": {
                "summary": "the whole roster (rosterd.snapshot.v1)",
                "responses": _responses({"200": _json(_ref("Snapshot"), "the roster")}),
            }
        },
        "/events": {
            "get": {
                "summary": "SSE: the whole roster on connect and after every change",
                "responses": _responses({"200": _SSE}, "429"),
            }
        },
        "/changes": {
            "get": {
                "summary": "SSE: one frame per change; a snapshot first, or the replay after ?since",
                "parameters": [
                    {
                        "name": "since",
                        "in": "query",
                        "schema": {"type": "string", "pattern": r"^([0-9]+:)?[0-9]+$"},
                        "description": "the last seq seen (or EPOCH:SEQ, the SSE id of the last frame)",
                    },
                    {"name": "status_epoch", "in": "query", "schema": {"type": "integer", "minimum": 0}},
                    {
                        "name": "terminals",
                        "in": "query",
                        "schema": {"type": "string", "enum": ["0", "1"]},
                        "description": "1: also a `terminals` frame (no id) first and whenever tmux's "
                        "panes, windows or sessions change, meaning: read GET /terminals again",
                    },
                    {
                        "name": "Last-Event-ID",
                        "in": "header",
                        "schema": {"type": "string"},
                        "description": "as since; wins over ?since (a reconnecting EventSource sends both)",
                    },
                ],
                "responses": _responses({"200": _SSE}, "400", "429"),
            }
        },
        "/sessions/{key}": {
            "get": {
                "summary": "one session's record",
                "parameters": [_KEY],
                "responses": _responses({"200": _json(_ref("Record"), "the record")}, "404", "409"),
            }
        },
        "/sessions/{key}/explain": {
            "get": {
                "summary": "which source set each field, what was shadowed or refused",
                "parameters": [_KEY],
                "responses": _responses({"200": _json(_ref("Explain"), "the explain view")}, "404", "409"),
            }
        },
        "/sessions/{key}/name": {
            "post": {
                "summary": "set or clear (null) a session's display name",
                "parameters": [_KEY],
                "requestBody": _body("Name"),
                "responses": _responses(
                    {"200": _json(_ref("ClaimResult"), "named")}, "400", "404", "409", "413"
                ),
            }
        },
        "/claim": {
            "post": {
                "summary": "send one claim (source defaults to hook)",
                "requestBody": _body("Claim"),
                "responses": _responses(
                    {"200": _json(_ref("ClaimResult"), "accepted")}, "400", "404", "409", "413"
                ),
            }
        },
        "/register": {
            "post": {
                "summary": "register a process a launcher started",
                "requestBody": _body("Register"),
                "responses": _responses(
                    {
                        "200": _json(_ref("ClaimResult"), "the process's session, already known"),
                        "201": _json(_ref("ClaimResult"), "a new session"),
                    },
                    "400",
                    "404",
                    "409",
                    "413",
                ),
            }
        },
        "/status": {
            "get": {
                "summary": "this node: identity, status epoch, counts, version",
                "responses": _responses({"200": _json(_ref("Status"), "the node")}),
            }
        },
        "/openapi.json": {
            "get": {
                "summary": "this document",
                "responses": _responses({"200": _json({"type": "object"}, "OpenAPI 3.0")}),
            }
        },
    }


def document() -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "rosterd",
            "version": __version__,
            "description": (
                "The roster of agent sessions on this node. Served on a 0600 unix socket (no token) "
                "and on 127.0.0.1 (bearer token from loopback.token beside rosterd.toml)."
            ),
        },
        "security": [{"bearer": []}],
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {**_schemas(), **openapi_agents.schemas()},
        },
        "paths": {**_paths(), **openapi_agents.paths()},
    }


async def route(_request: Request) -> JSONResponse:
    return JSONResponse(document())
