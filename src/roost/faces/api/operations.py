"""What a route says about itself, declared right above its handler::

    @operation("one session's record", answers={200: ("Record", "the record")}, fails=(404,), params=(KEY,))
    async def session(request: Request) -> JSONResponse: ...

``GET /openapi.json`` (:mod:`roost.faces.api.openapi`) walks the app's routes and reads each
handler's declaration, so a route and its description sit in one place and a route added
without one fails the document's test. The body's model is the very one the handler reads
the body with (:mod:`roost.faces.api.schemas`); an answer names its model in
:mod:`roost.faces.api.answers` by name, since only the document needs those models and importing
them costs the daemon's start ~17 ms it would pay for nothing.

This module is a dataclass and a decorator: every route module imports it when the daemon
starts, so it holds nothing that costs more.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pydantic import BaseModel

LIMIT = 4096
"""Bytes a POST body may hold unless its route declares more: a claim or a registration is a few
hundred."""

Shape = str | tuple[str, ...] | None
"""What an answer holds: a model of :mod:`roost.faces.api.answers` by name, one of several, a media
type (it has a ``/``: ``text/html``), or None for no body."""


@dataclass(frozen=True)
class Operation:
    """One route's description: ``answers`` maps a status to what it holds and what it means;
    ``fails`` lists the failure statuses it may answer besides those every route may (401 off
    the public paths, 403 for a write), each described once in :mod:`roost.faces.api.openapi`."""

    summary: str
    answers: Mapping[int, tuple[Shape, str]]
    fails: tuple[int, ...] = ()
    body: type[BaseModel] | tuple[type[BaseModel], ...] | None = None
    """The body's model, or several a body may be one of (a terminal's prompt, a headless session's)."""
    limit: int = LIMIT
    """Bytes the body may hold: the one number :func:`roost.faces.api.body.read` refuses past (413) and
    the document declares, so no schema has to say what no JSON Schema can (a size in bytes)."""
    params: tuple[Mapping[str, Any], ...] = ()
    """OpenAPI parameter objects (:func:`parameter`): every ``{name}`` of the path, and the query
    parameters and headers the handler reads."""
    events: Mapping[str, str] = field(default_factory=dict)
    """For a stream of server-sent events, each event's name and the model of its data, by name."""


H = TypeVar("H", bound=Callable[..., Any])


def operation(
    summary: str,
    *,
    answers: Mapping[int, tuple[Shape, str]],
    fails: tuple[int, ...] = (),
    body: type[BaseModel] | tuple[type[BaseModel], ...] | None = None,
    params: tuple[Mapping[str, Any], ...] = (),
    events: Mapping[str, str] | None = None,
    limit: int = LIMIT,
) -> Callable[[H], H]:
    """Attach the route's :class:`Operation` to its handler; the handler itself is unchanged."""
    declared = Operation(summary, answers, fails, body, limit, params, events or {})

    def declare(handler: H) -> H:
        handler.operation = declared  # type: ignore[attr-defined]
        return handler

    return declare


def of(endpoint: object) -> Operation | None:
    """The declaration a handler carries, or None for an endpoint of another face (``/mcp``)."""
    found = getattr(endpoint, "operation", None)
    return found if isinstance(found, Operation) else None


def parameter(where: str, name: str, schema: Mapping[str, Any], description: str = "") -> dict[str, Any]:
    """An OpenAPI parameter (``where`` is path, query or header); a path parameter is required."""
    found: dict[str, Any] = {"name": name, "in": where, "schema": dict(schema)}
    if where == "path":
        found["required"] = True
    if description:
        found["description"] = description
    return found


KEY = parameter(
    "path",
    "key",
    {"type": "string", "minLength": 1},
    "a session key, a pid on this node, a unique display name, or a pane (%N, percent-encoded as "
    "%25N) where the route writes to a pane",
)
SESSION = {**KEY, "name": "session"}
