"""Finding a session from what a caller typed: a key, a pid on this node, or a unique name.

A name finds the one session that has it; a live one (suspended counts) wins it over ended
ones, because an ended record lingers beside whatever continues it (a crashed headless session
resumes under a new key with the same name) and nobody means the one that is over. A name that
still leaves a choice (two live sessions, or no live one and two ended) lists the candidates
and never guesses. Every face that names a session (the API's ``{key}``, the MCP tools'
``name``) resolves it here, so they all find the same one.
"""

from __future__ import annotations

from roost.base.errors import Conflict
from roost.base.errors import TargetGone as NotFound
from roost.base.procfs import PID_MAX
from roost.truth.detect import procs
from roost.truth.roster import Roster, records


def resolve(roster: Roster, key: str) -> str:
    """The session key ``key`` refers to; NotFound or Conflict (ambiguous name) otherwise."""
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
    raise NotFound(f"no session {key!r}")
