"""Reading a request's JSON body, refusing anything larger than the limit before parsing it."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from roost.api.errors import BadRequest, TooLarge

LIMIT = 4096
"""Bytes a POST body may hold: a claim or a registration is a few hundred."""


async def read_json(request: Request, limit: int = LIMIT) -> Any:
    """The body as JSON; 413 past ``limit`` bytes (declared or streamed), 400 when not JSON."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not (declared.isascii() and declared.isdigit()):
            raise BadRequest("Content-Length is not a number")
        if int(declared) > limit:
            raise TooLarge(f"the body is larger than {limit} bytes", limit=limit)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise TooLarge(f"the body is larger than {limit} bytes", limit=limit)
    if not body:
        raise BadRequest("a JSON body is required")
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
