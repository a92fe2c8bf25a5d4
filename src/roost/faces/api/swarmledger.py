"""``GET /swarm/journal`` and ``GET /swarm/usage``: every node's ledger in one answer, each line
with the ``node`` and ``node_id`` it came from.

They take ``?since=`` as ``/journal`` and ``/usage`` do; the moment is fixed here and sent to
every member as an RFC 3339 time, so each node counts from the same instant. This node's own
ledger is read as its local route reads it; each member's is asked for at once
(:meth:`roost.remote.mesh.ledgers.Ledgers.gather`), and ``nodes`` says for every node whether its
ledger is in the answer, and why not when it is not (its link is down, it did not answer). A
member that cannot be reached costs the answer its lines, never a wait.

What a member sends is checked line by line here before any of it is passed on: a journal line
or a usage row that is not what roost writes is dropped and counted in that node's
``dropped``, and the node's own name and id are this node's word, never the member's.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from roost.faces.api import context
from roost.faces.api.errors import Unavailable
from roost.faces.api.ledger import BY, SINCE, by_of, encode, read_off_loop, since_of
from roost.faces.api.operations import operation
from roost.remote.swarm.peers import LOCAL
from roost.services.ledger import journal as journal_rules
from roost.services.ledger.usage import TOKENS
from roost.truth.roster.times import from_wire, to_wire

if TYPE_CHECKING:
    from roost.remote.mesh.ledgers import Heard, Ledgers

MAX_TEXT = 1024
"""Characters a member's journal field may hold (the journal cuts its own far shorter)."""
COUNT_MAX = 2**53


def _ledgers(request: Request) -> Ledgers:
    mesh = context.of(request).swarm
    if mesh is None or mesh.ledgers is None:
        raise Unavailable("this daemon runs no swarm")
    return mesh.ledgers


def _count(value: object) -> bool:
    return type(value) is int and 0 <= value < COUNT_MAX


def _entry(found: object) -> dict[str, Any] | None:
    """A member's journal line when it is one roost writes: its kind, time and key, and flat
    values of bounded size."""
    if not isinstance(found, dict) or found.get("kind") not in journal_rules.KINDS:
        return None
    key = found.get("session_key")
    try:
        at = from_wire(found.get("at"))
    except ValueError:
        return None
    if at is None or not isinstance(key, str) or not 0 < len(key) <= MAX_TEXT:
        return None
    for value in found.values():
        if isinstance(value, str) and len(value) > MAX_TEXT:
            return None
        if isinstance(value, bool) or (value is not None and not isinstance(value, str | int)):
            return None
    return found


def _sums(found: object) -> dict[str, Any] | None:
    """A member's usage sums (a row's or the total's) when they are what roost counts; a member
    that does not say ``unpriced`` (an older roost) had none it knew of."""
    if not isinstance(found, dict) or not _count(found.get("turns")) or not _count(found.get("sessions")):
        return None
    if not _count(found.get("unpriced", 0)):
        return None
    tokens, cost = found.get("tokens"), found.get("cost")
    names = set(TOKENS.values())
    if not isinstance(tokens, dict) or set(tokens) != names or not all(map(_count, tokens.values())):
        return None
    if not isinstance(cost, dict) or not all(isinstance(c, str) and 0 < len(c) <= 16 for c in cost):
        return None
    if not all(type(v) in (int, float) and math.isfinite(v) and v >= 0 for v in cost.values()):
        return None
    return found


GROUPS = {None: ("harness", "model"), "session": ("session_key",), "folder": ("folder",), "day": ("day",)}
"""The names a member's row must hold, by what its rows sum."""


def _row(found: object, by: str | None = None) -> dict[str, Any] | None:
    if _sums(found) is None:
        return None
    assert isinstance(found, dict)
    names = [found.get(name) for name in GROUPS.get(by, ())]
    if not all(isinstance(name, str) and 0 < len(name) <= MAX_TEXT for name in names):
        return None
    return found


def _node(heard: Heard | None, node: str, node_id: str) -> dict[str, Any]:
    return {
        "node": node,
        "node_id": node_id,
        "peer_state": LOCAL if heard is None else heard.peer_state,
        "answered": heard is None or heard.document is not None,
        "error": None if heard is None else heard.error,
        "dropped": 0,
    }


def _add(total: dict[str, Any], sums: dict[str, Any]) -> None:
    total["turns"] += sums["turns"]
    total["sessions"] += sums["sessions"]
    total["unpriced"] += sums.get("unpriced", 0)
    for name, count in sums["tokens"].items():
        total["tokens"][name] += count
    for currency, amount in sums["cost"].items():
        total["cost"][currency] = round(total["cost"].get(currency, 0.0) + amount, 9)


@operation(
    "every node's journal, oldest first, each line with node and node_id; nodes says whose is "
    "missing and why",
    answers={200: ("SwarmJournal", "the union of the journals")},
    fails=(400, 503),
    params=(SINCE,),
)
async def journal(request: Request) -> Response:
    daemon = context.of(request)
    ledgers, since = _ledgers(request), since_of(request)
    if daemon.journal is None:
        raise Unavailable("this daemon keeps no journal")
    kept = daemon.journal
    own = await read_off_loop(lambda: {"entries": kept.entries(since)})
    roster = daemon.live.roster
    nodes = [_node(None, roster.node, roster.node_id)]
    entries = [{**entry, "node": roster.node, "node_id": roster.node_id} for entry in own["entries"]]
    for heard in await ledgers.gather("journal", since):
        row = _node(heard, heard.node, heard.node_id)
        lines = (heard.document or {}).get("entries", [])
        if heard.document is not None and not isinstance(lines, list):
            row.update(answered=False, error=f"{heard.node} answered with something that is no journal")
            lines = []
        for line in lines:
            checked = _entry(line)
            if checked is None:
                row["dropped"] += 1
            else:
                entries.append({**checked, "node": heard.node, "node_id": heard.node_id})
        nodes.append(row)

    def body() -> bytes:
        entries.sort(key=lambda entry: (from_wire(entry["at"]) or 0.0, entry["node"]))
        return encode({"since": to_wire(since), "nodes": nodes, "entries": entries})

    return Response(await run_in_threadpool(body), media_type="application/json")


@operation(
    "every node's token usage and cost per harness and model (or per session, folder, node or "
    "UTC day), with node and node_id, and the sum of all",
    answers={200: ("SwarmUsage", "the union of the usage ledgers")},
    fails=(400, 503),
    params=(SINCE, BY),
)
async def usage(request: Request) -> Response:
    daemon = context.of(request)
    ledgers, by = _ledgers(request), by_of(request)
    since = since_of(request, ("since", "by"))
    if daemon.usage is None:
        raise Unavailable("this daemon keeps no usage ledger")
    kept = daemon.usage
    asked = None if by == "node" else by
    own = await read_off_loop(lambda: kept.summary(since, asked))
    roster = daemon.live.roster
    total: dict[str, Any] = {"turns": 0, "sessions": 0, "tokens": dict.fromkeys(TOKENS.values(), 0)}
    total.update(cost={}, unpriced=0)
    nodes = [{**_node(None, roster.node, roster.node_id), "total": own["total"]}]
    own_rows = [own["total"]] if by == "node" else own["rows"]
    rows = [{"node": roster.node, "node_id": roster.node_id, **row} for row in own_rows]
    _add(total, own["total"])
    for heard in await ledgers.gather("usage", since, asked):
        row = {**_node(heard, heard.node, heard.node_id), "total": None}
        document = heard.document or {}
        found = document.get("rows", [])
        sums = _sums(document.get("total"))
        if heard.document is not None and (not isinstance(found, list) or sums is None):
            row.update(answered=False, error=f"{heard.node} answered with something that is no usage ledger")
            found, sums = [], None
        for line in [] if by == "node" else found:
            checked = _row(line, by)
            if checked is None:
                row["dropped"] += 1
            else:
                rows.append({**checked, "node": heard.node, "node_id": heard.node_id})
        if sums is not None:
            row["total"] = sums
            _add(total, sums)
            if by == "node":
                rows.append({"node": heard.node, "node_id": heard.node_id, **sums})
        nodes.append(row)
    shown = {"since": to_wire(since), **({"by": by} if by is not None else {})}
    return Response(
        encode({**shown, "nodes": nodes, "rows": rows, "total": total}),
        media_type="application/json",
    )
