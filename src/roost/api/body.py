"""Reading a request's JSON body, refusing anything larger than the limit, or nested deeper than
any request of the API is, before parsing it."""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

from starlette.requests import Request

from roost.api.errors import BadRequest, TooLarge

LIMIT = 4096
"""Bytes a POST body may hold: a claim or a registration is a few hundred."""
DEPTH = 32
"""Arrays and objects a body may nest; the API's bodies nest a few. Python's parser recurses, so
a document thousands deep would fail inside it (RecursionError) instead of being refused."""
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_STEP = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[{]}"))


def too_deep(text: bytes, limit: int = DEPTH) -> bool:
    """Whether ``text`` nests arrays and objects more than ``limit`` deep, brackets inside
    strings not counted: the strings go, then each bracket left becomes a step of +1 or -1."""
    brackets = _STRING.sub(b"", text).translate(None, _NOT_BRACKETS).translate(_STEP)
    return bool(brackets) and max(accumulate(memoryview(brackets).cast("b"))) > limit


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
    if too_deep(bytes(body)):
        raise BadRequest(f"the body nests arrays and objects more than {DEPTH} deep")
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
