"""The one door into this node's sessions, and finding what a caller named, once.

The daemon builds one :class:`Door` and hands it to the API and the MCP server; a face never
holds the runner or the tmux server itself. :meth:`Door.find` resolves what a caller typed (a
session key, a pid, a unique name, or a pane id ``%N``) and says in one :class:`Found` which
lane the session is in: driven by the runner over ACP (headless), in a pane of roost's tmux
server, or owned by another node of the swarm. Every action takes what a caller typed or a
``Found`` already made, so a key is resolved once however many steps an action takes, and this
is the one place that learns the lanes.

**Another node's session** is asked about first (:func:`find`), for a node in a swarm:

- an exact session key names its owner by its prefix (``<node_id>:<pid>:<start_ticks>``), so a
  key of a current member is that member's, whether or not its roster has reached this node;
- a pid is a process on this node, never another's;
- a display name is the one live session that has it anywhere: this node's roster and the
  peers' rosters as last heard. One live session of that name on a peer and none here is the
  peer's; two or more live anywhere is ambiguous, and the refusal lists each candidate with its
  node, never guessing. Only members count: a node this one is no longer in a swarm with owns
  nothing it can act on.

This node acts on none of those sessions: the faces forward them to their owner
(:mod:`roost.actions.remote`), and every action here refuses a ``Found`` of that lane
(``owned_elsewhere``) rather than act on a record that is not this node's.

**This node's session** (:func:`resolve`): a key, a pid on this node, or a unique name. A name
finds the one session that has it; a live one (suspended counts) wins it over ended ones,
because an ended record lingers beside whatever continues it (a crashed headless session
resumes under a new key with the same name) and nobody means the one that is over. A name that
still leaves a choice (two live sessions, or no live one and two ended) lists the candidates
and never guesses. Every face that names a session resolves it here, so they all find the same
one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from roost.actions.occupants import pane_of
from roost.actions.remote import owner_of
from roost.base.errors import Conflict, TargetGone
from roost.base.procfs import PID_MAX
from roost.pane.tmux.targets import is_pane_id
from roost.pane.tmux.topology import Topology
from roost.truth.detect import procs
from roost.truth.roster import Record, Roster, records
from roost.truth.roster.live import Live
from roost.truth.roster.times import Clock

if TYPE_CHECKING:
    from roost.actions.permission import Permissions
    from roost.actions.remote import Forwarder
    from roost.headless.runner.runner import Runner
    from roost.pane.tmux.server import Server
    from roost.pane.tmux.view import Taps
    from roost.remote.swarm.peers import Peers
    from roost.services.ledger.budgets import Budgets


NO_RUNNER = "this daemon runs no headless sessions"

OWNED_ELSEWHERE = "owned_elsewhere"


@dataclass(frozen=True)
class Found:
    """A session a caller named, found once.

    ``key`` and ``record`` are None for a bare pane id (which names a terminal, whether or not
    a session runs there); ``pane`` is the pane of roost's tmux server it is in, None for a
    session in no pane of it; ``headless`` says the runner drives it. ``name`` is what the
    caller typed, for the refusals that quote it back. ``owner`` is the id of the node that
    owns the session when that is another node (its record, when the peers' rosters hold it,
    is that node's as last heard), with that node's name in ``node``.
    """

    name: str
    key: str | None
    record: Record | None
    pane: str | None
    headless: bool
    owner: str | None = None
    node: str | None = None


@dataclass(frozen=True)
class Door:
    """The live roster and what acts on its sessions, handed in by the daemon: the runner of
    headless sessions, roost's tmux server, the permission answerer, the panes' output taps,
    the tmux structure's version and the peers' rosters (each None, or empty, where the daemon
    runs none)."""

    live: Live
    clock: Clock = time.time
    tmux: Server | None = None
    runner: Runner | None = None
    permissions: Permissions | None = None
    taps: Taps | None = None
    """The panes' output pipes shared by browser terminals; None: each terminal reads
    ``%output`` from its own control client."""
    topology: Topology = field(default_factory=Topology)
    """Bumped when tmux's panes, windows or sessions change (the web page's terminal list)."""
    peers: Peers | None = None
    """The swarm's other nodes' rosters as last heard, kept beside this node's (None: no swarm
    face wants them, as in tests of one node)."""
    forwarder: Forwarder | None = None
    """The swarm's members and the one signed request to them (:mod:`roost.actions.remote`);
    None: no session is owned by another node, as on a door that serves an act a peer sent."""
    budgets: Budgets | None = None
    """This node's budgets and what they make of its sessions (:mod:`roost.services.ledger.budgets`);
    None where none are kept."""

    @property
    def socket(self) -> str | None:
        """The socket of roost's tmux server, as records name it in ``tmux.socket``."""
        return self.tmux.socket if self.tmux is not None else None

    def is_headless(self, key: str) -> bool:
        """Whether the runner drives the session ``key`` (an exact key)."""
        return self.runner is not None and self.runner.owns(key)

    def find(self, name: str | Found, *, pane_ids: bool = True) -> Found:
        """What ``name`` names; TargetGone (no such session) or Conflict (an ambiguous name).
        A ``Found`` is returned as it is. With ``pane_ids`` a pane id names its pane itself
        (the API's keys; the MCP tools' names never did)."""
        if isinstance(name, Found):
            return name
        if pane_ids and is_pane_id(name):
            return Found(name, None, None, name if self.tmux is not None else None, False)
        roster = self.live.roster
        if roster.record(name) is None:
            elsewhere = find(roster, self.peers, self.forwarder, name)
            if elsewhere is not None:
                record, owner, node = elsewhere
                return Found(name, record.session_key if record else name, record, None, False, owner, node)
        key = resolve(roster, name)
        record = roster.record(key)
        pane = pane_of(record, self.socket) if record is not None else None
        return Found(name, key, record, pane, self.is_headless(key))

    def local(self, name: str | Found, *, pane_ids: bool = True) -> Found:
        """What ``name`` names on this node; Conflict (``owned_elsewhere``) for a session of
        another node, which only its owner acts on."""
        found = self.find(name, pane_ids=pane_ids)
        if found.owner is not None:
            raise Conflict(
                f"{found.name} is a session of node {found.node or found.owner}: its owner acts on it",
                code=OWNED_ELSEWHERE,
                node=found.node,
                node_id=found.owner,
            )
        return found

    def session(self, name: str | Found) -> Record:
        """The record of the session ``name`` names (a pane id names none)."""
        found = self.local(name, pane_ids=False)
        if found.record is None:
            raise TargetGone(f"no session {found.name!r}")
        return found.record

    def pane(self, name: str | Found) -> str:
        """The pane ``name`` names: ``%N`` itself, or the pane of the session it resolves to.
        TargetGone when that is no pane of roost's tmux server (``%1;`` is none: only a whole
        pane id is passed to tmux as one)."""
        found = self.local(name)
        if found.pane is None:
            raise TargetGone(f"no session {found.name!r}")
        return found.pane

    def headless(self, name: str | Found) -> tuple[Runner, str]:
        """The runner and the key of the headless session ``name`` names; TargetGone (code
        ``not_headless``) for a session of another lane."""
        found = self.local(name, pane_ids=False)
        if self.runner is None:
            raise TargetGone(NO_RUNNER)
        if not found.headless or found.key is None:
            raise TargetGone(f"{found.name} is not a headless session", code="not_headless")
        return self.runner, found.key


def resolve(roster: Roster, key: str) -> str:
    """The session key ``key`` refers to; TargetGone or Conflict (ambiguous name) otherwise."""
    if roster.record(key) is not None:
        return key
    everyone = roster.records()
    if key.isascii() and key.isdigit() and len(key) <= len(str(PID_MAX)):
        pid = int(key)
        live = [r.session_key for r in everyone if r.pid == pid and r.liveness != records.ENDED]
        if live:
            return live[0]
        process = procs.identity(pid)
        found = roster.find(process) if process else None
        if found:
            return found
    named = [r for r in everyone if r.name == key]
    live = [r.session_key for r in named if r.liveness != records.ENDED]
    chosen = live or [r.session_key for r in named]
    if len(chosen) == 1:
        return chosen[0]
    if chosen:
        raise Conflict(f"the name {key!r} is ambiguous", candidates=chosen)
    raise TargetGone(f"no session {key!r}")


Elsewhere = tuple[Record | None, str, str]

"""A session of another node: its record as last heard (None when no frame of it has come),
the owner's node id and its name."""


def find(roster: Roster, peers: Peers | None, forwarder: Forwarder | None, name: str) -> Elsewhere | None:
    """The session of another node ``name`` names, None when it names none (this node's own
    rules then decide), Conflict when a name is live on more than one node or twice on one."""
    if forwarder is None:
        return None
    owner = owner_of(name)
    if owner is not None:
        if owner == roster.node_id or forwarder.member(owner) != owner:
            return None
        kept = peers.get(owner) if peers is not None else None
        return (kept.records.get(name) if kept else None), owner, forwarder.name(owner)
    if peers is None or (name.isascii() and name.isdigit() and len(name) <= len(str(PID_MAX))):
        return None
    remote = [
        record
        for record in peers.find(name)
        if record.name == name and forwarder.member(record.node_id) == record.node_id
    ]
    if not remote:
        return None
    local = [r for r in roster.records() if r.name == name and r.liveness != records.ENDED]
    everyone = local + remote
    if len(everyone) > 1:
        raise ambiguous(name, everyone)
    chosen = remote[0]
    return chosen, chosen.node_id, chosen.node


def ambiguous(name: str, candidates: list[Record]) -> Conflict:
    """The refusal of a name that leaves a choice: every candidate's key, and its node."""
    where = ", ".join(f"{record.session_key} on {record.node}" for record in candidates)
    return Conflict(
        f"the name {name!r} is ambiguous across the swarm: {where}",
        candidates=[record.session_key for record in candidates],
        nodes=[
            {"session_key": record.session_key, "node_id": record.node_id, "node": record.node}
            for record in candidates
        ],
    )
