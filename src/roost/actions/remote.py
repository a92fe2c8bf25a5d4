"""Acting on a session another node owns: one signed request to that node, answered as it answers.

A face that finds a session in the third lane (:meth:`roost.actions.sessions.Door.find`: owned by
another node) does not act on it here. It hands the owner an :class:`Act`, what the caller
asked in its own face's words (an API verb and its body as sent, or an MCP tool and its
arguments), and passes the owner's :class:`Reply` back untouched: the owner applies its own
rules, fences and validation exactly as for a caller of its own, so nothing is decided twice
or differently. The swarm itself (signing, TLS, the owner's address) is below the faces and
above this package, so it is handed in as a :class:`Forwarder` the mesh implements.

Boundaries: an act goes to its owner once, never queued or retried (an owner that does not
answer is ``PeerUnreachable``, exit 3, at once, so a prompt is never delivered twice), and an
owner never forwards an act again: it acts on its own sessions or refuses (``not_owner``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from roost.base.errors import PEER_UNREACHABLE, Conflict, PeerUnreachable, TargetGone

if TYPE_CHECKING:
    from starlette.requests import Request

WAIT_DEFAULT_S = 600.0
"""A headless prompt's wait when its body names none (``timeout_s``'s default)."""
WAIT_LIMIT_S = 24 * 3600.0
NOT_OWNER = "not_owner"
NO_SUCH_NODE = "no_such_node"
API, MCP = "api", "mcp"
FACES = (API, MCP)
READS = frozenset({"read", "explain", "tail", "wait", "session.find", "session.read_state"})
"""Verbs and tools that only read a session: forwarded like the rest, never journalled (the
journal says what happened to sessions, not who looked)."""


@dataclass(frozen=True)
class Act:
    """One action for the owner: ``session`` as the owner should find it (an exact key, or the
    name a caller typed under ``/swarm/{node}/…``; None for a start, which names none),
    ``face`` and ``verb`` (an API verb such as ``prompt``, or an MCP tool such as
    ``session.send``), ``body`` the JSON text the caller sent, and who asked: ``by`` (the
    person, token or session, as the journal names them) and ``via`` (``cli``, ``api``,
    ``web``, ``mcp``)."""

    session: str | None
    face: str
    verb: str
    body: str
    by: str
    via: str
    wait_s: float = 0.0
    """How long the owner may take on purpose (a prompt's or a wait's own timeout): the
    answer is awaited that much longer than a plain request."""


@dataclass(frozen=True)
class Reply:
    """The owner's answer as it gave it: the status and the JSON body."""

    status: int
    body: bytes


@dataclass(frozen=True)
class Through:
    """On the owner: an act that came from another node, and who asked there (for the journal,
    never the agent)."""

    node_id: str
    node: str
    by: str
    via: str


Dispatch = Callable[[Act, Through, "Request"], Awaitable[Reply]]
"""On the owner, one face doing an act another node forwarded, with the request it came in
(whose hanging up ends a wait); its answer as that face gives it (:mod:`roost.remote.mesh.acts`)."""


class Forwarder(Protocol):
    """The swarm as the door needs it: which nodes are members, their names, and one signed
    request to a member (:class:`roost.remote.mesh.acts.Forwarding`)."""

    def member(self, node: str) -> str | None:
        """The id of the current member other than this node that ``node`` names (its id or its
        name), or None."""
        ...

    def named(self, node: str) -> list[str]:
        """The ids of every current member ``node`` names, this node among them: the one whose
        id it is, else each that goes by that name (two may)."""
        ...

    def name(self, node_id: str) -> str:
        """A member's name (its id when none is known)."""
        ...

    async def forward(self, node_id: str, act: Act) -> Reply:
        """Send ``act`` to ``node_id`` once; PeerUnreachable when it does not answer."""
        ...

    async def hand(self, node_id: str, bundle: dict[str, object]) -> Reply:
        """Send a handoff's bundle (:mod:`roost.headless.runner.portable`) to ``node_id`` once, for it
        to take the session in; PeerUnreachable when it does not answer."""
        ...


def owner_of(key: str) -> str | None:
    """The node id a session key begins with (``<node_id>:<pid>:<start_ticks>``), or None for
    text that is no session key."""
    node_id, _, rest = key.partition(":")
    pid, _, ticks = rest.partition(":")
    if not node_id or not pid.isdigit() or not ticks.isdigit() or not pid.isascii() or not ticks.isascii():
        return None
    return node_id


def refuse_elsewhere(key: str | None, here: str) -> None:
    """On the owner, every way an act arrives (the API's forwarded request, the mesh's act, a
    relayed terminal) asks this one question, so the rule that ends a bounce between two nodes
    is written once: a key with another node's prefix is refused, never sent on."""
    owner = owner_of(key) if key is not None else None
    if owner is not None and owner != here:
        raise Conflict(
            f"{key} is not a session of this node: an owner acts on its own sessions, and an act "
            "is never forwarded twice",
            code=NOT_OWNER,
        )


def waiting(body: str, now: float) -> float:
    """Seconds an act's body asks its owner to wait on purpose before answering: a deadline
    (``deadline_ms``), a ``timeout_s`` with something to wait for, a headless wait's default."""
    try:
        doc = json.loads(body)
    except ValueError:
        return 0.0
    if not isinstance(doc, dict):
        return 0.0
    found = 0.0
    deadline = doc.get("deadline_ms")
    if isinstance(deadline, int | float) and not isinstance(deadline, bool):
        found = deadline / 1000 - now
    if doc.get("wait") is not None or doc.get("wait_until") is not None:
        timeout = doc.get("timeout_s")
        numeric = isinstance(timeout, int | float) and not isinstance(timeout, bool)
        found = max(found, float(timeout) if numeric else WAIT_DEFAULT_S)
    return min(max(found, 0.0), WAIT_LIMIT_S)


def node_named(forwarder: Forwarder | None, own_id: str, own_name: str, node: str) -> str:
    """The id of the one node of this swarm that ``node`` names, this node's own included (by
    its id, or by a name no other member goes by). TargetGone (``no_such_node``) when none does;
    Conflict when several go by that name, listing them (``candidates``, ``nodes``) as an
    ambiguous session name does, never guessing: a caller names one by its id."""
    if node == own_id:
        return own_id
    found = forwarder.named(node) if forwarder is not None else []
    if not found and node == own_name:  # a node alone, or one whose members list it not yet
        return own_id
    if not found:
        raise TargetGone(f"no node {node!r} in this node's swarm", code=NO_SUCH_NODE)
    if len(found) > 1:
        raise Conflict(
            f"{len(found)} nodes go by the name {node!r} ({', '.join(found)}): name one by its node id",
            candidates=found,
            nodes=[{"node_id": ident, "node": node} for ident in found],
        )
    return found[0]


async def forward(forwarder: Forwarder | None, node_id: str, act: Act) -> Reply:
    """The owner's answer to ``act``; PeerUnreachable when this node is in no swarm with it."""
    if forwarder is None or forwarder.member(node_id) != node_id:
        raise PeerUnreachable(f"node {node_id} is no member of this node's swarm", code=PEER_UNREACHABLE)
    return await forwarder.forward(node_id, act)
