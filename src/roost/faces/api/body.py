"""Reading a request's JSON body: refusing anything larger than its route's limit, or nested
deeper than any request of the API is, before parsing it; then holding it to its model
(:mod:`roost.faces.api.schemas`), so a route only ever sees the values it declared.

The limit is the one the serving route declares (:class:`roost.faces.api.operations.Operation`), so
the number the document states and the number refused past are one."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.requests import Request

from roost.base.validation import NESTING, Invalid, too_deep, validated
from roost.faces.api import operations
from roost.faces.api.errors import BadRequest, Conflict, TooLarge

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")


def limit_of(request: Request) -> int:
    """Bytes the body of ``request`` may hold: what its route declares."""
    declared = operations.of(request.scope.get("endpoint"))
    return declared.limit if declared is not None else operations.LIMIT


async def read_json(request: Request) -> Any:
    """The body as JSON; 413 past the route's limit (declared or streamed), 400 when not JSON."""
    limit = limit_of(request)
    declared = request.headers.get("content-length")
    if declared is not None:
        if not (declared.isascii() and declared.isdigit()):
            raise BadRequest("Content-Length is not a number")
        if len(declared.lstrip("0")) > len(str(limit)) or int(declared) > limit:
            raise TooLarge(f"the body is larger than {limit} bytes", limit=limit)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise TooLarge(f"the body is larger than {limit} bytes", limit=limit)
    if not body:
        raise BadRequest("a JSON body is required")
    if too_deep(bytes(body)):
        raise BadRequest(f"the body nests arrays and objects more than {NESTING} deep")
    try:
        return json.loads(body, parse_float=number)
    except (UnicodeDecodeError, ValueError) as error:
        raise BadRequest(f"the body is not JSON: {error}") from None


def number(text: str) -> float | int:
    """A JSON number with a fraction or an exponent: JSON has one kind of number, and JSON Schema
    (so the OpenAPI document) reads ``302.0`` as the integer 302, so it is one here too; the
    strict models still refuse ``302.5`` where they want an integer, and ``true``."""
    value = float(text)
    return int(value) if value.is_integer() else value


async def read_object(request: Request) -> dict[str, Any]:
    """The body as a JSON object."""
    doc = await read_json(request)
    if not isinstance(doc, dict):
        raise BadRequest("the body must be a JSON object")
    return doc


async def read(
    request: Request,
    model: type[M],
    context: dict[str, Any] | None = None,
    other: tuple[type[BaseModel], str] | None = None,
) -> M:
    """The body as ``model``; a 400 naming the first bad field (``{"error", "field"}``).

    ``other`` is the model of the route's other kind of body and why this session takes it not
    (a terminal's prompt sent to a headless session): a body of that kind is well formed, so it
    is refused with 409, saying so, rather than 400 for a field ``model`` lacks."""
    return held(await read_object(request), model, context, other)


def held(
    doc: dict[str, Any],
    model: type[M],
    context: dict[str, Any] | None = None,
    other: tuple[type[BaseModel], str] | None = None,
) -> M:
    """A body already read (:func:`read_object`) held to ``model``, as :func:`read` does: for a
    route that looks at the document first, to refuse something in words of its own."""
    try:
        return validated(model, doc, context)
    except Invalid as refused:
        if other is not None and _fits(other[0], doc, context):
            raise Conflict(other[1], code="other_kind") from None
        raise BadRequest(str(refused), field=refused.field) from None


def _fits(model: type[BaseModel], doc: dict[str, Any], context: dict[str, Any] | None) -> bool:
    try:
        validated(model, doc, context)
    except Invalid:
        return False
    return True
