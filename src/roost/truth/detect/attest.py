"""Proving that a reporting process is the agent of the session it names, from a fresh look at
the process tree: who sent a report is the kernel's word (the socket's peer), never the report's.

A report names its session by ``ROOST_SESSION_ID``; roost recorded the same id on the pane it
opened (``@roost-pane-session``). The reporter is believed only when, right now:

1. it is a known agent (by ``ROOST_AGENT`` or its command line, as the process scan decides);
2. it is the pane's root process or descends from it;
3. no known agent sits between it and the pane's root: a harness nested under another belongs
   to that one's session, and only the topmost agent speaks for a pane. A shell above it does
   not count, even one the scan names after the agent it runs (``sh -c 'pi; echo'``): the
   shell launched the agent, the agent is the one with an integration to report from.

So "the current known agent under the session" is that exact process: a tool or helper the
agent started is refused even though it inherited the id, and so is any process of another
pane, whatever id it presents. Two sibling agents at the top of one pane (``a & b``) would each
pass; the process scan keys the pane's session by the first, the other reports as its own.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import psutil

from roost.pane.state.newpane import PANE_SESSION
from roost.pane.tmux.panes import list_panes
from roost.pane.tmux.server import Server
from roost.pane.tmux.targets import is_pane_id
from roost.truth.detect import identify, procs
from roost.truth.detect.identify import Names
from roost.truth.detect.peers import NOT_HELD, tcp_peer
from roost.truth.roster.claims import ProcessId

POSTING_KEPT = 512
"""Panes whose process :meth:`Attestor.prove_post` remembers before it forgets the dead ones."""


class Unproven(Exception):
    """The reporter could not be shown to be the session's agent; the message says why, and
    ``pane`` is the pane the report named, when one holds that id (its session is told)."""

    def __init__(self, reason: str, pane: PaneRef | None = None) -> None:
        super().__init__(reason)
        self.pane = pane


@dataclass(frozen=True)
class Proof:
    """What the check established: the pane, and the agent process that speaks for it."""

    pane_id: str
    root: ProcessId
    process: ProcessId
    ancestors: tuple[ProcessId, ...]
    harness: str
    started_at: float | None


@dataclass(frozen=True)
class PaneRef:
    """A pane roost opened with a session id, and the process it was started with."""

    pane_id: str
    root: ProcessId


def agent_of(names: Names, pid: int, *, shells: bool = True) -> str | None:
    """The known agent a process is, by the same rules as the scan: its word, then its command.
    With ``shells=False`` a shell is never an agent, whatever its ``-c`` line runs."""
    try:
        process = psutil.Process(pid)
        if not shells and process.name() in identify.SHELLS:
            return None
        declared = identify.by_environment(names, process.environ())
        return declared or identify.by_command(names, process.name(), process.cmdline())
    except psutil.Error:
        return None


class Attestor:
    """Maps session ids to panes and proves reporters. The id-to-pane map is cached, because a
    pane's id never changes; an entry is looked up again once its pane's process is gone."""

    def __init__(self, server: Server, names: Names) -> None:
        self.server = server
        self.names = names
        self._panes: dict[str, PaneRef] = {}
        self._posting: dict[str, PaneRef] = {}
        self._proofs: dict[str, Proof] = {}
        """Per pane, the proof of an agent that is the pane's own process: it posts again and
        again, and what made it the pane's agent (a known agent, the pane's process) cannot
        change while it lives, which the kernel's word on every post says. A poster deeper in
        the tree is proven afresh each time: its ancestry may change."""

    def pane(self, session_id: str) -> PaneRef | None:
        """The live pane holding ``session_id``, or None."""
        known = self._panes.get(session_id)
        if known is not None and procs.alive(known.root):
            return known
        self._panes.pop(session_id, None)
        for pane in list_panes(self.server, (PANE_SESSION,)):
            if pane.opt(PANE_SESSION) != session_id or pane.dead or pane.pid <= 0:
                continue
            root = procs.identity(pane.pid)
            if root is not None:
                self._panes[session_id] = PaneRef(pane.id, root)
                return self._panes[session_id]
        return None

    def prove(self, session_id: str, peer: ProcessId) -> Proof:
        """The proof that ``peer`` is the agent of the pane holding ``session_id``; raises
        :class:`Unproven` with the reason otherwise."""
        if not procs.alive(peer):
            raise Unproven(f"the reporting process {peer.pid} has exited")
        pane = self.pane(session_id)
        if pane is None:
            raise Unproven(f"no live pane holds session {session_id}")
        return self._prove(pane, peer)

    def prove_in_pane(self, pane_id: str, peer: ProcessId) -> Proof:
        """The proof that ``peer`` is the agent of pane ``pane_id`` (what an HTTP hook's
        ``X-Pane`` names: ``$TMUX_PANE`` of the agent that posted it), by the same rules as a
        report's; raises :class:`Unproven` with the reason otherwise."""
        pane = self._live_pane(pane_id)
        if not procs.alive(peer):
            raise Unproven(f"the posting process {peer.pid} has exited")
        return self._prove(pane, peer)

    def prove_post(self, pane_id: str, local: object, remote: object) -> Proof:
        """The proof that whoever holds the loopback TCP connection from ``remote`` to ``local``
        is the agent of pane ``pane_id``: the kernel names the poster among that pane's
        processes (:func:`roost.truth.detect.peers.tcp_peer`), then :meth:`prove_in_pane`'s rules
        hold it. The pane's own process is looked at first (an agent a pane runs directly,
        as roost starts them), then its whole tree: a post costs a few files of /proc."""
        pane = self._posting_pane(pane_id)
        peer = tcp_peer(local, remote, among=[pane.root.pid])
        known = self._proofs.get(pane_id)
        if known is not None and known.process == peer == pane.root:
            return known  # the pane's own process, proven a known agent when it first posted
        if peer == NOT_HELD:
            try:
                tree = [child.pid for child in psutil.Process(pane.root.pid).children(recursive=True)]
            except psutil.Error:
                raise Unproven(f"pane {pane_id}'s process has exited", pane) from None
            peer = tcp_peer(local, remote, among=tree)
        if isinstance(peer, str):
            raise Unproven(f"{peer} (looked for among pane {pane_id}'s processes)", pane)
        proof = self._prove(pane, peer)
        if peer == pane.root:
            self._proofs[pane_id] = proof
        return proof

    def _posting_pane(self, pane_id: str) -> PaneRef:
        """:meth:`_live_pane`, remembered while its process lives: an agent posts every event
        from the same pane, and a pane's id names one pane for its server's life (a new server
        numbers its panes afresh, but its panes' processes are new ones too)."""
        known = self._posting.get(pane_id)
        if known is not None and procs.alive(known.root):
            return known
        self._posting.pop(pane_id, None)
        if len(self._posting) >= POSTING_KEPT:  # panes long closed go; live ones are looked up again
            self._posting = {k: v for k, v in self._posting.items() if procs.alive(v.root)}
            self._proofs = {k: v for k, v in self._proofs.items() if k in self._posting}
        found = self._live_pane(pane_id)
        self._posting[pane_id] = found
        return found

    def _live_pane(self, pane_id: str) -> PaneRef:
        if not is_pane_id(pane_id):
            raise Unproven(f"{pane_id!r} is not a pane id (%N)")
        found = list_panes(self.server, target=pane_id)
        pane = next((p for p in found if p.id == pane_id and not p.dead and p.pid > 0), None)
        root = None if pane is None else procs.identity(pane.pid)
        if pane is None or root is None:
            raise Unproven(f"no live pane {pane_id} on roost's tmux server")
        return PaneRef(pane.id, root)

    def _prove(self, pane: PaneRef, peer: ProcessId) -> Proof:
        chain = () if peer == pane.root else procs.ancestors(peer.pid, stop=pane.root.pid)
        if peer != pane.root and (not chain or chain[-1] != pane.root):
            raise Unproven(f"process {peer.pid} is not in the process tree of pane {pane.pane_id}", pane)
        harness = agent_of(self.names, peer.pid)
        if harness is None:
            raise Unproven(f"process {peer.pid} in pane {pane.pane_id} is not a known agent", pane)
        for above in chain:
            other = agent_of(self.names, above.pid, shells=False)
            if other is not None:
                raise Unproven(
                    f"process {peer.pid} runs under agent process {above.pid} ({other}), "
                    f"which is the agent of pane {pane.pane_id}",
                    pane,
                )
        started_at = None
        with contextlib.suppress(psutil.Error):
            started_at = psutil.Process(peer.pid).create_time()
        if not procs.alive(peer):  # the pid may name another process by now
            raise Unproven(f"the reporting process {peer.pid} has exited", pane)
        return Proof(pane.pane_id, pane.root, peer, chain, harness, started_at)
