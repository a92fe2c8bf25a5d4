"""Reading a request's JSON body: refusing anything larger than the limit, or nested deeper than
any request of the API is, before parsing it; then holding it to its model
(:mod:`roost.api.schemas`), so a route only ever sees the values it declared."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.requests import Request

from roost.api.errors import BadRequest, TooLarge
from roost.validation import NESTING, Refused, too_deep, validated

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
        return json.loads(body)
    except (UnicodeDecodeError, ValueError) as error:
        raise BadRequest(f"the body is not JSON: {error}") from None


async def read_object(request: Request, limit: int = LIMIT) -> dict[str, Any]:
    """The body as a JSON object."""
    doc = await read_json(request, limit)
    if not isinstance(doc, dict):
        raise BadRequest("the body must be a JSON object")
    return doc


async def read(
    request: Request, model: type[M], limit: int = LIMIT, context: dict[str, Any] | None = None
) -> M:
    """The body as ``model``; a 400 naming the first bad field (``{"error", "field"}``)."""
    doc = await read_object(request, limit)
    try:
        return validated(model, doc, context)
    except Refused as refused:
        raise BadRequest(str(refused), field=refused.field) from None
