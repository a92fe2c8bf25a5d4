"""``GET /openapi.json``: every HTTP route described as OpenAPI 3.1, generated from the models
that check the bodies (:mod:`roost.api.schemas`, the roster's claim) and the models of the
answers (:mod:`roost.api.replies`). The table below adds what a model cannot say: each route's
summary, parameters and the failures it can answer. A test checks the table names every HTTP
route the app serves; the terminal WebSocket and the static files are described in words.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema
from starlette.requests import Request
from starlette.responses import JSONResponse

from roost import __version__
from roost.api import gate, replies, schemas
from roost.api.body import LIMIT
from roost.ledger import since
from roost.roster.claimschema import ClaimBody

REF = "#/components/schemas/{model}"
ERRORS = {
    "400": "malformed request: bad JSON, a bad field (named in `field`), a bad parameter",
    "401": "TCP request without the right bearer token (or the web app's session cookie)",
    "403": "a browser request whose Origin is not this daemon's",
    "404": "no such session, pane, process, subscription, webhook or route",
    "409": "refused as things stand: a stale or ended session, an ambiguous name, a pinned row "
    "that moved (see code), an agent that is not installed",
    "413": f"a body over its limit ({LIMIT} bytes unless the route says more), or text or data over its own",
    "429": "too many open streams and waits, or webhooks",
    "502": "a headless session's holder or ACP adapter failed (code holder_failed or adapter_failed, "
    "with the adapter's last words)",
    "503": "tmux could not do it, or push notifications, webhooks or the ledger are not running",
}
_KEY = {
    "name": "key",
    "in": "path",
    "required": True,
    "description": "a session key, a pid on this node, a unique display name, or a pane (%N, "
    "percent-encoded as %25N) where the route writes to a pane",
    "schema": {"type": "string", "minLength": 1},
}
_PANE = {
    "name": "pane",
    "in": "path",
    "required": True,
    "description": "a pane of roost's tmux server, %N",
    "schema": {"type": "string", "pattern": "^%[0-9]+$"},
}
_SESSION = {**_KEY, "name": "session"}
_CURSOR = {"type": "string", "pattern": r"^([0-9]+:)?[0-9]+$"}
_CHANGES = (
    {
        "name": "since",
        "in": "query",
        "schema": _CURSOR,
        "description": "the last seq seen (or EPOCH:SEQ, the SSE id of the last frame)",
    },
    {"name": "status_epoch", "in": "query", "schema": {"type": "integer", "minimum": 0}},
    {
        "name": "terminals",
        "in": "query",
        "schema": {"type": "string", "enum": ["0", "1"]},
        "description": "1: also a `terminals` frame (no id) first and whenever tmux's panes, "
        "windows or sessions change, meaning: read GET /terminals again",
    },
    {
        "name": "Last-Event-ID",
        "in": "header",
        "schema": _CURSOR,
        "description": "as since; wins over ?since (a reconnecting EventSource sends both)",
    },
)
_SINCE = {
    "name": "since",
    "in": "query",
    "schema": {"type": "string", "pattern": since.PATTERN},
    "description": f"from when: {since.WANTED}; absent, everything kept",
}
_LINES = {"name": "lines", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 20}}
SSE = "text/event-stream"
HTML = "text/html"
SCRIPT = "text/javascript"
MANIFEST = "application/manifest+json"


@dataclass(frozen=True)
class Operation:
    """One route: ``ok`` maps a status to the reply's model (or a media type, or None for no
    body) and its description."""

    method: str
    path: str
    summary: str
    ok: dict[str, tuple[type[BaseModel] | tuple[type[BaseModel], ...] | str | None, str]]
    errors: tuple[str, ...] = ()
    body: type[BaseModel] | tuple[type[BaseModel], ...] | None = None
    """A model, or several a body may be one of (a terminal's prompt, a headless session's)."""
    params: tuple[dict[str, Any], ...] = ()


OPERATIONS = (
    Operation(
        "get",
        "/snapshot",
        "the whole roster (rosterd.snapshot.v1)",
        {"200": (replies.Snapshot, "the roster")},
    ),
    Operation(
        "get",
        "/events",
        "SSE: the whole roster on connect and after every change",
        {"200": (SSE, "events")},
        ("429",),
    ),
    Operation(
        "get",
        "/changes",
        "SSE: one Change per frame; a snapshot first, or the replay after ?since",
        {"200": (SSE, "Change frames")},
        ("400", "429"),
        params=_CHANGES,
    ),
    Operation(
        "get",
        "/sessions/{key}",
        "one session's record",
        {"200": (replies.Record, "the record")},
        ("404", "409"),
        params=(_KEY,),
    ),
    Operation(
        "get",
        "/sessions/{key}/explain",
        "which source set each field, what was shadowed or refused",
        {"200": (replies.Explain, "the explanation")},
        ("404", "409"),
        params=(_KEY,),
    ),
    Operation(
        "post",
        "/sessions/{key}/name",
        "set or clear (null) a session's display name",
        {"200": (replies.ClaimResult, "named")},
        ("400", "404", "409", "413"),
        schemas.Name,
        (_KEY,),
    ),
    Operation(
        "post",
        "/sessions/{key}/input",
        "write raw bytes to a pane, unfenced, once",
        {"200": (replies.InputResult, "written")},
        ("400", "404", "409", "413", "503"),
        schemas.Input,
        (_KEY,),
    ),
    Operation(
        "post",
        "/sessions/{key}/prompt",
        "a terminal's: write one fenced prompt while the pinned row holds; a headless session's: "
        "send the turn (resuming it first when suspended); either optionally awaits the turn",
        {
            "200": (
                (replies.PromptOutcome, replies.HeadlessAnswer),
                "accepted or ambiguous (never retried); a headless session's record",
            )
        },
        ("400", "404", "409", "413", "429", "502"),
        (schemas.Prompt, schemas.HeadlessPrompt),
        (_KEY,),
    ),
    Operation(
        "post",
        "/sessions",
        "start a headless session over the harness's ACP adapter",
        {"201": (replies.HeadlessAnswer, "started: its record")},
        ("400", "409", "413", "502"),
        schemas.Start,
    ),
    Operation(
        "post",
        "/sessions/{key}/spawn",
        "start a child of a headless session (the parent's policy unless one is named)",
        {"201": (replies.HeadlessAnswer, "started: the child's record")},
        ("400", "404", "409", "413", "502"),
        schemas.Spawn,
        (_KEY,),
    ),
    Operation(
        "post",
        "/sessions/{key}/permission",
        "answer the pending permission of a headless session or a gated pane; fenced by the "
        "request id, status_epoch and occupant_id it pins (409 with a code when they moved)",
        {"200": (replies.HeadlessAnswer, "answered: the record after")},
        ("400", "404", "409", "413"),
        schemas.Permission,
        (_KEY,),
    ),
    Operation(
        "post",
        "/gate",
        "a harness's gate: claim the wait, then hold the request open until it is answered, "
        "the person answers in the terminal, the session moves on or gate_timeout_s passes",
        {"200": (replies.GateDecision, "the decision, or null: fall back to the dialog")},
        ("400", "409", "413"),
        schemas.Gate,
    ),
    *(
        Operation(
            "post",
            f"/sessions/{{key}}/{verb}",
            summary,
            {"200": (replies.HeadlessAnswer, "done: the record")},
            ("400", "404", "409", "413", "502"),
            schemas.NoBody,
            (_KEY,),
        )
        for verb, summary in (
            ("cancel", "cancel a headless session's running turn"),
            ("suspend", "stop a headless session's holder; the record stays, suspended"),
            ("resume", "start a suspended headless session again (session/load)"),
            ("stop", "end a headless session and every process under it"),
        )
    ),
    Operation(
        "post",
        "/sessions/{key}/wait",
        "await one pinned occupant's outcome",
        {"200": (replies.WaitOutcome, "the outcome")},
        ("400", "404", "409", "413", "429"),
        schemas.Wait,
        (_KEY,),
    ),
    Operation("get", "/agents", "every status row, in session_id order", {"200": (replies.Rows, "the rows")}),
    Operation(
        "get",
        "/agents/{session}",
        "one session's status row",
        {"200": (replies.Row, "the row")},
        ("404", "409"),
        params=(_SESSION,),
    ),
    Operation(
        "post",
        "/claim",
        "send one claim (source defaults to hook; launcher, acp and integration are refused over HTTP)",
        {"200": (replies.ClaimResult, "accepted")},
        ("400", "404", "409", "413"),
        ClaimBody,
    ),
    Operation(
        "post",
        "/register",
        "register a process a launcher started",
        {
            "200": (replies.ClaimResult, "the process's session, already known"),
            "201": (replies.ClaimResult, "a new session"),
        },
        ("400", "404", "409", "413"),
        schemas.Register,
    ),
    Operation(
        "get",
        "/status",
        "this node: identity, status epoch, counts, version",
        {"200": (replies.Status, "the node")},
    ),
    Operation("get", "/openapi.json", "this document", {"200": ("application/json", "OpenAPI 3.1")}),
    Operation(
        "get",
        "/",
        "the web app's page (a browser without a session cookie is sent to /login)",
        {"200": (HTML, "the page"), "303": (None, "not logged in: to /login")},
    ),
    Operation(
        "get",
        "/login",
        "the login page; with ?token= a one-time login that sets the session cookie",
        {
            "200": (HTML, "the login page"),
            "303": (None, "logged in: on to the app"),
            "401": (HTML, "a link used already, or not one this daemon gave"),
        },
        params=({"name": "token", "in": "query", "schema": {"type": "string"}},),
    ),
    Operation(
        "post",
        "/login-link",
        "a one-time login address for a browser",
        {"200": (replies.LoginLink, "the link")},
    ),
    Operation("get", "/manifest.webmanifest", "the web app's manifest", {"200": (MANIFEST, "the manifest")}),
    Operation("get", "/sw.js", "the web app's service worker", {"200": (SCRIPT, "the script")}),
    Operation(
        "get",
        "/terminals",
        "every live pane of roost's tmux server",
        {"200": (replies.Terminals, "the panes")},
        ("503",),
    ),
    Operation(
        "get",
        "/terminals/{pane}/tail",
        "a pane's last non-blank screen lines (lines: 1 to 20, default 3)",
        {"200": (replies.Tail, "the lines")},
        ("400", "404", "503"),
        params=(_PANE, _LINES),
    ),
    Operation(
        "get",
        "/launcher",
        "the agents the launcher can start, and the harnesses it can start headless",
        {"200": (replies.Launcher, "the agents")},
    ),
    Operation(
        "post",
        "/launch",
        "start an agent or a command in a new window of session main",
        {"201": (replies.Launched, "the window")},
        ("400", "409", "413", "503"),
        schemas.Launch,
    ),
    Operation(
        "get",
        "/push/vapid-key",
        "the key browsers subscribe with",
        {"200": (replies.VapidKey, "the key")},
        ("503",),
    ),
    Operation(
        "post",
        "/push/subscribe",
        "subscribe a device to pushes",
        {"201": (replies.Subscribed, "subscribed")},
        ("400", "404", "413", "503"),
        schemas.Subscribe,
    ),
    Operation(
        "delete",
        "/push/subscribe",
        "unsubscribe a device",
        {"204": (None, "unsubscribed")},
        ("400", "404", "413", "503"),
        schemas.Unsubscribe,
    ),
    Operation(
        "post",
        "/push/viewing",
        "which session a device shows now (its pushes are held back meanwhile)",
        {"204": (None, "noted")},
        ("400", "404", "413", "503"),
        schemas.Viewing,
    ),
    Operation(
        "post",
        "/sessions/{key}/seen",
        "a device opened this session: withdraw its pending push",
        {"200": (replies.Seen, "acknowledged")},
        ("404", "409", "503"),
        params=(_KEY,),
    ),
    Operation(
        "post",
        "/hooks",
        "register a webhook: each change of the kinds named (none: every kind) is POSTed to a "
        "loopback or tailnet URL as {event, data}, the token as its bearer",
        {"201": (replies.Webhook, "registered (the token is never shown again)")},
        ("400", "413", "429", "503"),
        schemas.Hook,
    ),
    Operation(
        "get",
        "/hooks",
        "every registered webhook, without its token",
        {"200": (replies.Webhooks, "the webhooks")},
        ("503",),
    ),
    Operation(
        "delete",
        "/hooks/{id}",
        "delete a webhook; what it had queued is dropped",
        {"204": (None, "deleted")},
        ("404", "503"),
        params=({"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},),
    ),
    Operation(
        "get",
        "/journal",
        "session starts, ends, suspends, resumes and permission answers, oldest first; no agent text",
        {"200": (replies.Journal, "the journal")},
        ("400", "503"),
        params=(_SINCE,),
    ),
    Operation(
        "get",
        "/usage",
        "token usage and cost of the turns that ended, per harness and model",
        {"200": (replies.UsageSummary, "the sums")},
        ("400", "503"),
        params=(_SINCE,),
    ),
)


def _ref(model: type[BaseModel] | tuple[type[BaseModel], ...]) -> dict[str, Any]:
    if isinstance(model, tuple):
        return {"oneOf": [_ref(one) for one in model]}
    return {"$ref": REF.format(model=model.__name__)}


def _reply(
    shape: type[BaseModel] | tuple[type[BaseModel], ...] | str | None, description: str
) -> dict[str, Any]:
    if shape is None:
        return {"description": description}
    if isinstance(shape, str):
        kind = "object" if shape.endswith("json") else "string"
        return {"description": description, "content": {shape: {"schema": {"type": kind}}}}
    return {"description": description, "content": {"application/json": {"schema": _ref(shape)}}}


def _operation(op: Operation) -> dict[str, Any]:
    public = op.path in gate.PUBLIC or op.path == gate.PAGE  # the page sends strangers to /login
    codes = (*(() if public else ("401",)), *op.errors, *(("403",) if op.method != "get" else ()))
    responses = {code: _reply(replies.Error, ERRORS[code]) for code in codes}
    responses.update((status, _reply(*reply)) for status, reply in op.ok.items())
    doc: dict[str, Any] = {"summary": op.summary, "responses": responses}
    if public:
        doc["security"] = []
    if op.params:
        doc["parameters"] = list(op.params)
    if op.body is not None:
        doc["requestBody"] = {"required": True, "content": {"application/json": {"schema": _ref(op.body)}}}
    return doc


def _models() -> list[tuple[type[BaseModel], str]]:
    bodies = {one for op in OPERATIONS for one in _each(op.body)}
    answers = {one for op in OPERATIONS for shape, _ in op.ok.values() for one in _each(shape)}
    answers |= {replies.Error, replies.Change}
    return [(model, "validation") for model in bodies] + [(model, "serialization") for model in answers]


def _each(shape: object) -> tuple[type[BaseModel], ...]:
    if isinstance(shape, tuple):
        return shape
    return (shape,) if isinstance(shape, type) else ()


@cache
def document() -> dict[str, Any]:
    """The document; built once, since every part of it is fixed when the package is."""
    _, defs = models_json_schema(sorted(_models(), key=lambda pair: pair[0].__name__), ref_template=REF)
    paths: dict[str, dict[str, Any]] = {}
    for op in OPERATIONS:
        paths.setdefault(op.path, {})[op.method] = _operation(op)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "rosterd",
            "version": __version__,
            "description": (
                "The roster of agent sessions on this node, and the web app over it. Served on a "
                "0600 unix socket (no token) and on 127.0.0.1 (bearer token from loopback.token "
                "beside rosterd.toml, or the web app's session cookie). Not described here: "
                "the terminal WebSocket /ws/terminal/{pane} and the static files under /static/."
            ),
        },
        "security": [{"bearer": []}],
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": defs.get("$defs", {}),
        },
        "paths": paths,
    }


async def route(_request: Request) -> JSONResponse:
    return JSONResponse(document())
