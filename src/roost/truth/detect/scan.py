"""The process scan: which known agents run on this machine, in roost's panes and outside them.

One pass reads the process table once (each process's ``/proc/PID/stat``, read directly by
:mod:`roost.base.procfs`: a psutil object per process costs several times that), walks each roost
pane's process tree to its topmost known agent, and lists the topmost known agents that run
outside roost's panes. A process's command line and environment are read once per
incarnation (through psutil) and cached, so a pass over an unchanged machine costs one read of
each process's ``stat``.

This module only observes; :mod:`roost.truth.detect.scanclaims` turns what it saw into claims.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import deque
from dataclasses import dataclass
from typing import NamedTuple

import psutil

from roost.base import procfs
from roost.pane.state import words
from roost.pane.tmux.panes import Pane, list_panes
from roost.pane.tmux.server import Server
from roost.truth.detect import identify, procs
from roost.truth.detect.identify import Names
from roost.truth.roster.claims import ProcessId


@dataclass(frozen=True)
class Agent:
    """A running known agent: the process, its parents (nearest first), and what it runs as."""

    harness: str
    process: ProcessId
    ancestors: tuple[ProcessId, ...]
    started_at: float
    cwd: str | None
    tty: str | None


@dataclass(frozen=True)
class PaneSighting:
    """One live roost pane: its root process and the topmost known agent in its tree, if any."""

    pane: Pane
    root: ProcessId
    started_at: float
    agent: Agent | None


@dataclass(frozen=True)
class Observation:
    """Everything one pass saw, at one moment; pure data, so claims are derived without I/O."""

    at: float
    socket: str
    panes: tuple[PaneSighting, ...]
    outside: tuple[Agent, ...]


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
COMM = 15
"""The kernel keeps this many bytes of a process's name; psutil lengthens such a name from argv[0]."""


class _Proc(NamedTuple):
    """One process as one pass read it; a tuple, since a pass makes one for every process."""

    pid: int
    ppid: int
    comm: bytes
    """The kernel's name (``comm``, possibly truncated), undecoded: what a pass reads, and an exec changes."""
    ticks: int
    created: float
    zombie: bool


class Scanner:
    """Observes processes and roost's tmux panes. Not thread-safe: one pass at a time."""

    def __init__(self, server: Server, names: Names) -> None:
        self.server = server
        self.names = names
        self._uid = os.getuid()
        # (pid, create time, comm) -> agent by command line; (pid, create time) -> agent by environment
        self._by_command: dict[tuple[int, float, bytes], str | None] = {}
        self._by_environment: dict[tuple[int, float], str | None] = {}
        self._handles: dict[tuple[int, float], psutil.Process] = {}

    def observe(self) -> Observation:
        """One pass: a tmux listing and a process table, turned into sightings."""
        at = time.time()
        try:
            listed = list_panes(self.server, words.PANE_OPTIONS)
        except OSError:  # no tmux installed: there are no roost panes, agents may still run
            listed = []
        panes = [p for p in listed if not p.dead and p.pid > 0]
        table = self._table()
        children: dict[int, list[int]] = {}
        for proc in table.values():
            children.setdefault(proc.ppid, []).append(proc.pid)
        in_panes: set[int] = set()
        sightings = []
        for pane in panes:
            tree = _tree(pane.pid, children)
            in_panes.update(tree)
            sighting = self._pane(pane, tree, table)
            if sighting is not None:
                sightings.append(sighting)
        outside = self._outside(table, in_panes)
        return Observation(at, self.server.socket, tuple(sightings), tuple(outside))

    def _table(self) -> dict[int, _Proc]:
        """Every process now, from one read of each ``/proc/PID/stat``; the caches keep only these."""
        booted = _boot_time()
        table: dict[int, _Proc] = {}
        for pid in procfs.pids():
            stat = procfs.stat(pid)
            if stat is None:
                continue
            ticks = stat.start_ticks
            table[pid] = _Proc(pid, stat.ppid, stat.name, ticks, ticks / CLOCK_TICKS + booted, stat.gone)
        live = {(proc.pid, proc.created) for proc in table.values()}
        self._by_command = {k: v for k, v in self._by_command.items() if (k[0], k[1]) in live}
        self._by_environment = {k: v for k, v in self._by_environment.items() if k in live}
        self._handles = {k: v for k, v in self._handles.items() if k in live}
        return table

    def _handle(self, proc: _Proc) -> psutil.Process:
        """psutil's view of this incarnation, for what it reads well (argv, environment, cwd, tty);
        made once and kept while it runs."""
        key = (proc.pid, proc.created)
        handle = self._handles.get(key)
        if handle is None:
            handle = self._handles[key] = psutil.Process(proc.pid)
        return handle

    def _command_agent(self, proc: _Proc) -> str | None:
        key = (proc.pid, proc.created, proc.comm)
        if key not in self._by_command:
            try:
                argv = self._handle(proc).cmdline()
            except psutil.Error:
                argv = []
            name = _name(os.fsdecode(proc.comm), argv)
            self._by_command[key] = identify.by_command(self.names, name, argv)
        return self._by_command[key]

    def _environment_agent(self, proc: _Proc) -> str | None:
        key = (proc.pid, proc.created)
        if key not in self._by_environment:
            try:
                environ = self._handle(proc).environ()
            except psutil.Error:
                environ = {}
            self._by_environment[key] = identify.by_environment(self.names, environ)
        return self._by_environment[key]

    def _pane(self, pane: Pane, tree: list[int], table: dict[int, _Proc]) -> PaneSighting | None:
        top = table.get(pane.pid)
        if top is None or top.zombie:
            return None
        root = ProcessId(top.pid, top.ticks)
        agent = None
        for pid in tree:  # breadth first: the first agent found is the topmost
            proc = table.get(pid)
            if proc is None:
                continue
            harness = self._environment_agent(proc) or self._command_agent(proc)
            if harness:
                agent = self._agent(proc, harness, stop=pane.pid)
                break
        return PaneSighting(pane, root, top.created, agent)

    def _outside(self, table: dict[int, _Proc], in_panes: set[int]) -> list[Agent]:
        found = []
        for proc in table.values():
            if proc.pid in in_panes or proc.pid == os.getpid():
                continue
            harness = self._command_agent(proc)
            if not harness or self._has_agent_ancestor(proc, table) or not self._mine(proc.pid):
                continue
            agent = self._agent(proc, harness, stop=None)
            if agent is not None:
                found.append(agent)
        return found

    def _has_agent_ancestor(self, proc: _Proc, table: dict[int, _Proc]) -> bool:
        """A harness under another harness collapses into it: only the topmost one is a session."""
        current = table.get(proc.ppid)
        for _ in range(procs.MAX_DEPTH):
            if current is None or current.pid <= 1:
                return False
            if self._command_agent(current):
                return True
            current = table.get(current.ppid)
        return False

    def _mine(self, pid: int) -> bool:
        """One daemon per user: another user's agents are theirs to report."""
        try:
            return os.stat(f"/proc/{pid}").st_uid == self._uid
        except OSError:
            return False

    def _agent(self, proc: _Proc, harness: str, stop: int | None) -> Agent | None:
        process = procs.identity(proc.pid)
        if process is None:
            return None
        cwd = tty = None
        with contextlib.suppress(psutil.Error):
            handle = self._handle(proc)
            cwd = handle.cwd() or None
            tty = handle.terminal()
        return Agent(harness, process, procs.ancestors(proc.pid, stop), proc.created, cwd, tty)


def _boot_time() -> float:
    """When the machine booted, as psutil reads it (``btime`` in ``/proc/stat``): a process's start
    ticks plus this is the ``create_time`` psutil would give."""
    with open("/proc/stat", "rb") as stat:
        for line in stat:
            if line.startswith(b"btime"):
                return float(line.split()[1])
    raise RuntimeError("no btime in /proc/stat")


def _name(comm: str, argv: list[str]) -> str:
    """The process's name as psutil gives it: ``comm``, or argv[0]'s base name when ``comm`` is a
    truncated prefix of it."""
    if len(comm) >= COMM and argv:
        longer = os.path.basename(argv[0])
        if longer.startswith(comm):
            return longer
    return comm


def _tree(root: int, children: dict[int, list[int]]) -> list[int]:
    """The pids of a process tree, breadth first from its root."""
    order, queue = [], deque([root])
    seen = set()
    while queue:
        pid = queue.popleft()
        if pid in seen:
            continue
        seen.add(pid)
        order.append(pid)
        queue.extend(children.get(pid, ()))
    return order
