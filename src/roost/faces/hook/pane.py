"""The command hook's pane: the one tmux gave the agent's processes (``$TMUX_PANE`` on the server
``$TMUX`` names), or, for a harness whose hooks run in a background process serving several
panes (``[hook] shared_process``), the pane holding the event's session."""

from __future__ import annotations

import os

from roost.actions import hookstamp
from roost.pane.tmux.server import Server

TYPE_CHECKING = False
if TYPE_CHECKING:
    from roost.truth.detect.hookevents import Heard


def stamp(heard: Heard) -> tuple[str | None, str | None, str | None]:
    """:func:`roost.actions.hookstamp.stamp` on this hook's pane; nothing outside tmux."""
    found = here()
    if found is None:
        return None, None, None
    pane_id, socket = found
    server = Server(socket)
    shared = False
    markers = heard.agent.hook.shared_process
    if markers:  # most manifests name none, and then the hook need not import owner at all
        from roost.faces.hook import owner

        shared = owner.runs_in_shared_process(markers)
        if shared:
            holding = owner.pane_holding(server, heard.event.session_id)
            if holding is None:
                return None, None, None
            pane_id = holding
    return hookstamp.stamp(heard, server, pane_id, shared=shared)


def answered() -> None:
    """The gate's dialog was answered from rosterd: this pane's badge leaves blocked."""
    found = here()
    if found is not None:
        hookstamp.answered(Server(found[1]), found[0])


def here() -> tuple[str, str] | None:
    """The pane this hook runs in and its tmux server's socket, from the environment tmux
    gives a pane's processes; None outside tmux."""
    pane_id = os.environ.get("TMUX_PANE")
    tmux = os.environ.get("TMUX")
    return (pane_id, tmux.split(",")[0]) if pane_id and tmux else None
