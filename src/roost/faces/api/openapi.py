"""``GET /openapi.json``: every HTTP route described as OpenAPI 3.1, read off the routes.

The app's routes are walked and each handler's declaration (:mod:`roost.faces.api.operations`) gives
its summary, parameters, body model, answers and failures; the schemas are generated from the
models that check the bodies (:mod:`roost.faces.api.schemas`, the roster's claim) and the models of
the answers (:mod:`roost.faces.api.answers`). So nothing here names a route: one added without a
declaration stops the document (and its test), and one declared describes itself. An endpoint
of another face mounted beside the routes (``/mcp``) and the terminal WebSocket and static
files are described in words.

Two things a JSON Schema cannot say are said with keywords of roost's own, each a number the
daemon refuses past with 413: ``x-max-bytes`` on a request body (its bytes as sent) or on a
string (its UTF-8 bytes), and ``x-max-decoded-bytes`` on base64 text (the bytes it decodes to).
What this daemon's config decides is filled in as the document is built: which harnesses a
headless session may run (:data:`roost.faces.api.schemas.CONFIGURED`).

Built on the first request and kept on the app: every part of it is fixed when the app is.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from roost import __version__
from roost.actions import headless
from roost.faces.api import answers, context, gate, operations, schemas
from roost.faces.api.operations import LIMIT, Operation, Shape

REF = "#/components/schemas/{model}"
SSE = "text/event-stream"
ERRORS = {
    400: "malformed request: bad JSON, a bad field (named in `field`), a bad parameter",
    401: "TCP request without the right bearer token (or the web app's session cookie)",
    403: "a browser request whose Origin is not this daemon's",
    404: "no such session, pane, process, subscription, webhook or route",
    409: "refused as things stand: a stale or ended session, an ambiguous name, a pinned row "
    "that moved (see code), an agent or an ACP adapter that is not installed",
    413: f"a body over its limit ({LIMIT} bytes unless the route says more), or text or data over its own",
    429: "too many open streams and waits, or webhooks",
    502: "a headless session's holder or ACP adapter failed (code holder_failed or adapter_failed, "
    "with the adapter's last words)",
    503: "tmux could not do it, or push notifications, webhooks or the ledger are not running",
    504: "what the call waited for did not happen in time: an agent that did not leave its pane",
}
DESCRIPTION = (
    "The roster of agent sessions on this node, and the web app over it. Served on a 0600 unix "
    "socket (no token) and on 127.0.0.1 (bearer token from loopback.token beside rosterd.toml, or "
    "the web app's session cookie). Not described here: the terminal WebSocket "
    "/ws/terminal/{pane}, the static files under /static/ and the MCP server at /mcp."
)


def _model(name: str) -> type[BaseModel]:
    found = getattr(answers, name, None)
    if not (isinstance(found, type) and issubclass(found, BaseModel)):
        raise LookupError(f"{name!r} names no model of roost.faces.api.answers")
    return found


def _names(shape: Shape) -> tuple[str, ...]:
    """The reply models an answer names (none for a media type or no body)."""
    if isinstance(shape, tuple):
        return shape
    return (shape,) if shape is not None and "/" not in shape else ()


def _ref(model: str | type[BaseModel] | tuple[type[BaseModel], ...]) -> dict[str, Any]:
    if isinstance(model, tuple):
        return {"oneOf": [_ref(one) for one in model]}
    return {"$ref": REF.format(model=model if isinstance(model, str) else model.__name__)}


def _events(events: Mapping[str, str]) -> dict[str, Any]:
    """One event of a stream (OpenAPI 3.1 reads a stream's schema as each event's): its name,
    and its data as JSON of the model that name carries."""
    by_model: dict[str, list[str]] = {}
    for name, model in events.items():
        by_model.setdefault(model, []).append(name)
    return {
        "oneOf": [
            {
                "type": "object",
                "required": ["event", "data"],
                "properties": {
                    "event": {"enum": names},
                    "id": {"type": "string", "description": "STATUS_EPOCH:SEQ, to resume from"},
                    "data": {
                        "type": "string",
                        "contentMediaType": "application/json",
                        "contentSchema": _ref(model),
                    },
                },
            }
            for model, names in by_model.items()
        ]
    }


def _answer(shape: Shape, description: str, events: Mapping[str, str]) -> dict[str, Any]:
    if shape is None:
        return {"description": description}
    if shape == SSE:
        return {"description": description, "content": {SSE: {"schema": _events(events)}}}
    if isinstance(shape, str) and "/" in shape:
        kind = "object" if shape.endswith("json") else "string"
        return {"description": description, "content": {shape: {"schema": {"type": kind}}}}
    schema = _ref(shape) if isinstance(shape, str) else {"oneOf": [_ref(one) for one in shape]}
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _operation(path: str, method: str, op: Operation) -> dict[str, Any]:
    public = path in gate.PUBLIC or path == gate.PAGE  # the page sends strangers to /login
    codes = sorted({*(() if public else (401,)), *op.fails, *((403,) if method != "get" else ())})
    responses = {str(code): _answer("Error", ERRORS[code], {}) for code in codes}
    responses.update((str(status), _answer(*answer, op.events)) for status, answer in op.answers.items())
    doc: dict[str, Any] = {"summary": op.summary, "responses": responses}
    if public:
        doc["security"] = []
    if op.params:
        doc["parameters"] = [dict(param) for param in op.params]
    if op.body is not None:
        doc["requestBody"] = {
            "required": True,
            "description": f"JSON of at most {op.limit} bytes: a larger body is a 413",
            "x-max-bytes": op.limit,
            "content": {"application/json": {"schema": _ref(op.body)}},
        }
    return doc


def described(routes: Iterable[BaseRoute], mounts: Collection[str] = ()) -> list[tuple[str, str, Operation]]:
    """(path, method, declaration) of every HTTP route; one that declares nothing, or not each
    parameter of its path, is an error, unless it is another face's endpoint mounted beside them."""
    found = []
    for route in routes:
        if not isinstance(route, Route) or route.path in mounts:
            continue  # a WebSocket, the static files, the MCP server
        op = operations.of(route.endpoint)
        if op is None:
            raise LookupError(f"{route.path} declares no operation (roost.faces.api.operations)")
        named = {param["name"] for param in op.params if param["in"] == "path"}
        if named != set(route.param_convertors):
            raise LookupError(f"{route.path} declares path parameters {sorted(named)}")
        found += [  # the path as a client writes it: /sessions/{key}, not {key:segment}
            (route.path_format, method.lower(), op)
            for method in sorted(route.methods or ())
            if method != "HEAD"
        ]
    return found


def _models(ops: Iterable[Operation]) -> list[tuple[type[BaseModel], str]]:
    bodies: set[type[BaseModel]] = set()
    replies: set[type[BaseModel]] = {answers.Error}
    for op in ops:
        bodies.update(op.body if isinstance(op.body, tuple) else (op.body,) if op.body else ())
        replies.update(_model(name) for shape, _ in op.answers.values() for name in _names(shape))
        replies.update(_model(name) for name in op.events.values())
    pairs = [(model, "validation") for model in bodies] + [(model, "serialization") for model in replies]
    return sorted(pairs, key=lambda pair: pair[0].__name__)


def _configured(node: Any, choices: Mapping[str, Collection[str]]) -> None:
    """Each schema marked :data:`roost.faces.api.schemas.CONFIGURED` narrowed to the values this daemon's
    config allows, in the mark's place (left marked where the config names none: a daemon that
    runs no headless session refuses every start, whatever it names)."""
    if isinstance(node, dict):
        name = node.get(schemas.CONFIGURED)
        if choices.get(name):
            del node[schemas.CONFIGURED]
            node["enum"] = sorted(choices[name])
        for value in node.values():
            _configured(value, choices)
    elif isinstance(node, list):
        for value in node:
            _configured(value, choices)


def document(
    routes: Iterable[BaseRoute],
    mounts: Collection[str] = (),
    choices: Mapping[str, Collection[str]] | None = None,
) -> dict[str, Any]:
    """The document of ``routes``; ``choices`` are what the daemon's config allows where a
    schema is marked :data:`roost.faces.api.schemas.CONFIGURED` (``{"harnesses": […]}``)."""
    ops = described(routes, mounts)
    _, defs = models_json_schema(_models(op for _, _, op in ops), ref_template=REF)
    _configured(defs, choices or {})
    paths: dict[str, dict[str, Any]] = {}
    for path, method, op in ops:
        paths.setdefault(path, {})[method] = _operation(path, method, op)
    return {
        "openapi": "3.1.0",
        "info": {"title": "rosterd", "version": __version__, "description": DESCRIPTION},
        "security": [{"bearer": []}],
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": defs.get("$defs", {}),
        },
        "paths": paths,
    }


async def route(request: Request) -> JSONResponse:
    """The app's document, built on its first request."""
    state = request.app.state
    if getattr(state, "openapi", None) is None:
        choices = {schemas.HARNESSES: headless.harnesses(context.of(request).door)}
        state.openapi = document(request.app.routes, getattr(state, "mounts", ()), choices)
    return JSONResponse(state.openapi)
