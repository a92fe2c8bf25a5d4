"""Reading a request's JSON body: refusing anything larger than the limit, or nested deeper than
any request of the API is, before parsing it; then holding it to its model
(:mod:`roost.api.schemas`), so a route only ever sees the values it declared."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.requests import Request

from roost.api.errors import BadRequest, Conflict, TooLarge
from roost.validation import NESTING, Invalid, too_deep, validated

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")

LIMIT = 4096
"""Bytes a POST body may hold: a claim or a registration is a few hundred."""


async def read_json(request: Request, limit: int = LIMIT) -> Any:
    """The body as JSON; 413 past ``limit`` bytes (declared or streamed), 400 when not JSON."""
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


async def read_object(request: Request, limit: int = LIMIT) -> dict[str, Any]:
    """The body as a JSON object."""
    doc = await read_json(request, limit)
    if not isinstance(doc, dict):
        raise BadRequest("the body must be a JSON object")
    return doc


async def read(
    request: Request,
    model: type[M],
    limit: int = LIMIT,
    context: dict[str, Any] | None = None,
    other: tuple[type[BaseModel], str] | None = None,
) -> M:
    """The body as ``model``; a 400 naming the first bad field (``{"error", "field"}``).

    ``other`` is the model of the route's other kind of body and why this session takes it not
    (a terminal's prompt sent to a headless session): a body of that kind is well formed, so it
    is refused with 409, saying so, rather than 400 for a field ``model`` lacks."""
    doc = await read_object(request, limit)
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
