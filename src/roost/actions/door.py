"""The one door into this node's sessions: what every face acts through, and finding what a
caller named, once.

The daemon builds one :class:`Door` and hands it to the API and the MCP server; a face never
holds the runner or the tmux server itself. :meth:`Door.find` resolves what a caller typed (a
session key, a pid, a unique name, or a pane id ``%N``) with :func:`roost.actions.lookup.resolve`
and says in one :class:`Found` which lane the session is in: driven by the runner over ACP
(headless), in a pane of roost's tmux server, or owned by another node of the swarm. Every
action takes what a caller typed or a ``Found`` already made, so a key is resolved once however
many steps an action takes, and this is the one place that learns the lanes.

The third lane, owned by another node, is found three ways (:mod:`roost.actions.swarmlookup`):
an exact session key whose node-id prefix is a member's; a display name that is unique across
the swarm (this roster and the peers' rosters as last heard); never by a pid, which names a
process on this node only. A name live on two nodes is ambiguous and lists its candidates with
their nodes. This node acts on none of those sessions: the faces forward them to their owner
(:mod:`roost.actions.remote`), and every action here refuses a ``Found`` of that lane
(``owned_elsewhere``) rather than act on a record that is not this node's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from roost.actions import swarmlookup
from roost.actions.lookup import resolve
from roost.actions.occupants import pane_of
from roost.base.errors import Conflict, TargetGone
from roost.pane.tmux.targets import is_pane_id
from roost.pane.tmux.topology import Topology
from roost.truth.roster import Record
from roost.truth.roster.live import Live
from roost.truth.roster.times import Clock

if TYPE_CHECKING:
    from roost.actions.permission import Permissions
    from roost.actions.remote import Forwarder
    from roost.headless.runner.runner import Runner
    from roost.pane.tmux.server import Server
    from roost.pane.tmux.view import Taps
    from roost.remote.swarm.peers import Peers

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
            elsewhere = swarmlookup.find(roster, self.peers, self.forwarder, name)
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
