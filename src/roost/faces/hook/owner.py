"""Which pane a hook event belongs to.

Normally it is ``$TMUX_PANE``: the agent runs in a pane and its hooks inherit the pane's
environment. Some harnesses run every agent's hooks in one shared background process (codex's
managed ``app-server``), which carries the environment of whichever pane started it. A manifest
names such processes in ``[hook] shared_process``; when one of them is among the hook's
ancestors, ``$TMUX_PANE`` proves nothing, and the event is taken only by a pane that already
says it holds that session. Naming no pane is better than badging another agent's.
"""

from __future__ import annotations

import os

from roost.base import procfs
from roost.pane.state import words as w
from roost.pane.tmux.server import SEP, Server, TmuxError


def runs_in_shared_process(markers: tuple[str, ...]) -> bool:
    """True when an ancestor's command line has one of ``markers`` as a whole argument."""
    if not markers:
        return False
    wanted = set(markers)
    return any(wanted.intersection(procfs.cmdline(pid)) for pid, _ in procfs.lineage(os.getppid()))


def pane_holding(server: Server, session_id: str | None) -> str | None:
    """The one pane whose recorded session is ``session_id``; None when none or several."""
    if not session_id:
        return None
    try:
        out = server.out("list-panes", "-a", "-F", SEP.join(["#{pane_id}", f"#{{{w.SESSION_ID}}}"]))
    except TmuxError:
        return None
    found = [line.split(SEP)[0] for line in out.splitlines() if line.endswith(SEP + session_id)]
    return found[0] if len(found) == 1 else None
