"""Who calls a tool: the process at the other end of the unix socket, and the session it runs in.

The kernel names the peer of a unix-socket connection (``SO_PEERCRED``: the daemon's listener
puts it in each request's scope); what it says about itself is never asked. The session is
the nearest of that process and its ancestors that the roster knows, as a hook or a claim is
nested into its session: a harness starts ``rosterd mcp`` as its child, so the bridge's parent
is the harness, and the caller is the session that harness runs. Over the loopback listener
there is no peer to name: the caller is anonymous (a script with the bearer token): a tool that
would default to the caller's folder needs one named, and the caller's policy counts as the
strictest (:mod:`roost.faces.mcp.tools`).

A call another node forwards (:mod:`roost.faces.mcp.tools`) has no process here either: its
caller is anonymous, held to the strictest policy, and named as that node said (``by``) and
with the node it came through (``through``), for the journal.
"""

from __future__ import annotations

from dataclasses import dataclass

from roost.truth.detect import procs
from roost.truth.roster import ProcessId, Record, Roster


@dataclass(frozen=True)
class Caller:
    """The calling process (None: not known, over TCP) and its session's key (None: none);
    for a call forwarded by another node, who asked there and that node's name."""

    process: ProcessId | None = None
    session: str | None = None
    by: str | None = None
    through: str | None = None

    def record(self, roster: Roster) -> Record | None:
        return roster.record(self.session) if self.session else None

    def label(self) -> str:
        """Who asked, as the journal keeps it: the calling session, else its process."""
        if self.by is not None:
            return self.by
        if self.session is not None:
            return f"session {self.session}"
        if self.process is not None:
            return f"pid {self.process.pid}"
        return "token holder"


ANONYMOUS = Caller()


def identify(roster: Roster, process: ProcessId | None) -> Caller:
    """The caller ``process`` is: the session of the nearest of it and its ancestors."""
    if process is None:
        return ANONYMOUS
    for candidate in (process, *procs.ancestors(process.pid)):
        key = roster.find(candidate)
        if key is not None:
            return Caller(process, key)
    return Caller(process)
