"""``GET /journal`` and ``GET /usage``: the ledger's two files, read back.

Both take ``?since=`` (``7d``, ``3h``, ``15m`` or an RFC 3339 time; see :mod:`roost.services.ledger.since`)
and answer ``since`` as the moment it named (null: everything kept); any other parameter is
refused. The files are read and the answer encoded off the daemon's loop: they hold up to a
few megabytes each.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from roost.faces.api import context
from roost.faces.api.errors import BadRequest, Unavailable
from roost.faces.api.operations import operation, parameter
from roost.services.ledger import since as since_rule
from roost.truth.roster.times import to_wire

SINCE = parameter(
    "query",
    "since",
    {"type": "string", "pattern": since_rule.PATTERN},
    f"from when: {since_rule.WANTED}; absent, everything kept",
)


@operation(
    "session starts, ends, suspends, resumes and permission answers, oldest first; no agent text",
    answers={200: ("Journal", "the journal")},
    fails=(400, 503),
    params=(SINCE,),
)
async def journal(request: Request) -> Response:
    daemon = context.of(request)
    kept = daemon.journal
    if kept is None:
        raise Unavailable("this daemon keeps no journal")
    return await _answer(request, lambda since: {"entries": kept.entries(since)})


@operation(
    "token usage and cost of the turns that ended, per harness and model",
    answers={200: ("UsageSummary", "the sums")},
    fails=(400, 503),
    params=(SINCE,),
)
async def usage(request: Request) -> Response:
    daemon = context.of(request)
    kept = daemon.usage
    if kept is None:
        raise Unavailable("this daemon keeps no usage ledger")
    return await _answer(request, kept.summary)


def since_of(request: Request) -> float | None:
    """The moment ``?since=`` names (None: everything kept); BadRequest for any other parameter."""
    query = request.query_params
    unknown = sorted(set(query) - {"since"})
    if unknown or len(query.getlist("since")) > 1:
        raise BadRequest("the one parameter taken is since, once", field=unknown[0] if unknown else "since")
    given = query.get("since")
    return None if given is None else since_rule.parse(given, context.of(request).clock(), "since")


def encode(document: dict[str, Any]) -> bytes:
    return json.dumps(document, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


async def read_off_loop(read: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``read()`` in a thread; Unavailable when a ledger file cannot be read."""
    try:
        return await run_in_threadpool(read)
    except OSError as error:
        raise Unavailable(f"the ledger could not be read: {error}") from None


async def _answer(request: Request, read: Callable[[float | None], dict[str, Any]]) -> Response:
    since = since_of(request)
    doc = await read_off_loop(lambda: {"since": to_wire(since), **read(since)})
    return Response(await run_in_threadpool(encode, doc), media_type="application/json")
