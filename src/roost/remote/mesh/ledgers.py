"""Each node's journal and usage ledger, read by the others: the swarm's ``/swarm/journal`` and
``/swarm/usage`` on the wire.

Every node serves its own two ledgers to members behind the signed door
(``GET /swarm/ledger/journal`` and ``GET /swarm/ledger/usage``, ``?since=`` an RFC 3339 time,
and for usage ``?by=`` as its local route takes it), as the documents its local
``GET /journal`` and ``GET /usage`` answer. A node's budgets read each peer's day this way
(:meth:`Ledgers.ask`, ``by=folder``), in the background, never on a prompt's way.
A node that is asked for the union reads its own, and asks every current member at once
(:meth:`Ledgers.gather`), each on a connection of its own within the dialer's bounds:

- a member whose roster link is down (``unreachable`` in the union) is not asked at all: its
  ledger is missing from the answer, marked, and nothing waits on it;
- a member that does not answer in time, or answers with something that is not a ledger, is
  marked the same way with the reason; nothing is retried.

Only reads: a member can read another's ledger, never write to it, and what it reads is what
the owner's own local route would show (who acted and through which node, never agent text).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from roost.base.errors import PeerUnreachable, UsageError
from roost.remote.mesh import listener
from roost.remote.mesh.dialer import Dialer
from roost.remote.mesh.membership import Membership
from roost.remote.swarm.members import Member
from roost.remote.swarm.peers import REACHABLE, UNREACHABLE, Peers
from roost.services.ledger import since as since_rule
from roost.services.ledger.journal import Journal
from roost.services.ledger.usage import BY, Usage
from roost.truth.roster.times import to_wire

PATH = "/swarm/ledger/{kind}"
KINDS = ("journal", "usage")
READ_S = 10.0
"""Seconds a member may take to read and send its ledger once connected (a few megabytes)."""
MAX_ANSWER = 16 * 1024 * 1024
"""Bytes of a member's ledger this node reads: the ledger files' own bound, with room."""


@dataclass(frozen=True)
class Heard:
    """One member's ledger as asked for: ``document`` when it answered with one, else
    ``error`` saying why not (for a person), and how its roster link stood."""

    node_id: str
    node: str
    peer_state: str
    document: dict[str, Any] | None
    error: str | None


def _encode(document: dict[str, Any]) -> bytes:
    return json.dumps(document, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


class Ledgers:
    """This node's two ledgers served to members, and the asking of every member for theirs."""

    def __init__(
        self,
        membership: Membership,
        dialer: Dialer,
        peers: Peers | None,
        journal: Journal,
        usage: Usage,
        clock: Callable[[], float],
    ) -> None:
        self.membership = membership
        self.dialer = dialer
        self.peers = peers
        self.journal = journal
        self.usage = usage
        self.clock = clock

    def route(self) -> Route:
        return listener.route(PATH, self.serve, method="GET")

    def read(self, kind: str, since: float | None, by: str | None = None) -> dict[str, Any]:
        """This node's ``kind`` ledger from ``since``: what its local route answers."""
        if kind == "journal":
            body: dict[str, Any] = {"entries": self.journal.entries(since)}
        else:
            body = self.usage.summary(since, by)
        return {"since": to_wire(since), **body}

    async def serve(self, request: Request) -> Response:
        """``GET /swarm/ledger/{kind}``: a member reads this node's journal or usage."""
        kind = request.path_params["kind"]
        if kind not in KINDS:
            raise UsageError(f"a ledger is one of {', '.join(KINDS)}", field="kind")
        query = request.query_params
        taken = {"since", "by"} if kind == "usage" else {"since"}
        if set(query) - taken or any(len(query.getlist(name)) > 1 for name in taken):
            raise UsageError(
                f"the parameters taken are {' and '.join(sorted(taken))}, each once", field="since"
            )
        given, by = query.get("since"), query.get("by")
        since = None if given is None else since_rule.parse(given, self.clock(), "since")
        if by is not None and by not in BY:
            raise UsageError(f"by must be one of {', '.join(BY)}", field="by")
        body = await run_in_threadpool(lambda: _encode(self.read(kind, since, by)))
        return Response(body, media_type="application/json")

    async def gather(self, kind: str, since: float | None, by: str | None = None) -> list[Heard]:
        """Every current member's ``kind`` ledger from ``since`` (usage grouped ``by``), asked
        all at once; a member whose link is down is not asked. In the members' order by name."""
        if kind not in KINDS:
            raise ValueError(f"no ledger {kind!r}")
        query = [f"since={quote(to_wire(since) or '')}"] if since is not None else []
        query += [f"by={quote(by)}"] if by is not None else []
        target = PATH.format(kind=kind) + ("?" + "&".join(query) if query else "")
        members = sorted(self.membership.peers(), key=lambda member: (member.name, member.node_id))
        asked = (self._ask(kind, member, target) for member in members)
        return list(await asyncio.gather(*asked))

    async def ask(self, node_id: str, since: float, by: str) -> dict[str, Any] | None:
        """One member's usage sums from ``since`` grouped ``by``; None when it is no member,
        its link is down, or it did not answer with sums (nothing is retried)."""
        member = next((m for m in self.membership.peers() if m.node_id == node_id), None)
        if member is None:
            return None
        target = f"{PATH.format(kind='usage')}?since={quote(to_wire(since) or '')}&by={quote(by)}"
        heard = await self._ask("usage", member, target)
        return heard.document

    async def _ask(self, kind: str, member: Member, target: str) -> Heard:
        node_id, name = member.node_id, member.name
        kept = self.peers.get(node_id) if self.peers is not None else None
        if kept is not None and not kept.reachable:
            return Heard(node_id, name, UNREACHABLE, None, "its link is down: not asked")
        try:
            status, body = await self.dialer.once(
                member, "GET", target, None, read_s=READ_S, limit=MAX_ANSWER
            )
        except PeerUnreachable as unreachable:
            return Heard(node_id, name, UNREACHABLE, None, unreachable.message)
        if status != 200:
            return Heard(node_id, name, REACHABLE, None, f"{name} did not send its {kind}: HTTP {status}")
        try:
            document = json.loads(body)
        except ValueError:
            document = None
        if not isinstance(document, dict):
            return Heard(node_id, name, REACHABLE, None, f"{name} answered with something that is no {kind}")
        return Heard(node_id, name, REACHABLE, document, None)
