"""``GET /journal`` and ``GET /usage``: the ledger's two files, read back.

Both take ``?since=`` (``7d``, ``3h``, ``15m`` or an RFC 3339 time; see :mod:`roost.services.ledger.since`)
and answer ``since`` as the moment it named (null: everything kept); ``/usage`` also takes
``?by=`` (``session``, ``folder``, ``node``, ``day``: what its rows group, harness and model when
absent); any other parameter is refused. The files are read and the answer encoded off the
daemon's loop: they hold up to a few megabytes each.
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
from roost.services.ledger import usage as usage_rules
from roost.truth.roster.times import to_wire

SINCE = parameter(
    "query",
    "since",
    {"type": "string", "pattern": since_rule.PATTERN},
    f"from when: {since_rule.WANTED}; absent, everything kept",
)
BY = parameter(
    "query",
    "by",
    {"type": "string", "enum": list(usage_rules.BY)},
    "what each row sums: one session, folder, node or UTC day; absent, one harness and model",
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
    "token usage and cost of the turns that ended, both lanes, per harness and model or per "
    "session, folder, node or UTC day",
    answers={200: ("UsageSummary", "the sums")},
    fails=(400, 503),
    params=(SINCE, BY),
)
async def usage(request: Request) -> Response:
    daemon = context.of(request)
    kept = daemon.usage
    if kept is None:
        raise Unavailable("this daemon keeps no usage ledger")
    by = by_of(request)
    roster = daemon.live.roster
    return await _answer(
        request, lambda since: named(kept.summary(since, by), roster.node, roster.node_id), ("since", "by")
    )


def named(summary: dict[str, Any], node: str, node_id: str) -> dict[str, Any]:
    """A summary by node names this node in its one row."""
    if summary.get("by") == "node":
        summary["rows"] = [{**row, "node": node, "node_id": node_id} for row in summary["rows"]]
    return summary


def since_of(request: Request, taken: tuple[str, ...] = ("since",)) -> float | None:
    """The moment ``?since=`` names (None: everything kept); BadRequest for a parameter not
    ``taken`` or given twice."""
    query = request.query_params
    unknown = sorted(set(query) - set(taken))
    if unknown or any(len(query.getlist(name)) > 1 for name in taken):
        said = (
            "the one parameter taken is since"
            if taken == ("since",)
            else f"the parameters taken are {', '.join(taken)}"
        )
        raise BadRequest(f"{said}, once", field=unknown[0] if unknown else "since")
    given = query.get("since")
    return None if given is None else since_rule.parse(given, context.of(request).clock(), "since")


def by_of(request: Request) -> str | None:
    """What ``?by=`` groups the usage rows by (None: harness and model); the parameters checked."""
    since_of(request, ("since", "by"))
    by = request.query_params.get("by")
    if by is not None and by not in usage_rules.BY:
        raise BadRequest(f"by must be one of {', '.join(usage_rules.BY)}", field="by")
    return by


def encode(document: dict[str, Any]) -> bytes:
    return json.dumps(document, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


async def read_off_loop(read: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``read()`` in a thread; Unavailable when a ledger file cannot be read."""
    try:
        return await run_in_threadpool(read)
    except OSError as error:
        raise Unavailable(f"the ledger could not be read: {error}") from None


async def _answer(
    request: Request, read: Callable[[float | None], dict[str, Any]], taken: tuple[str, ...] = ("since",)
) -> Response:
    since = since_of(request, taken)
    doc = await read_off_loop(lambda: {"since": to_wire(since), **read(since)})
    return Response(await run_in_threadpool(encode, doc), media_type="application/json")
