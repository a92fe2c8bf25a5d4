"""The tmux side of one pane viewer: its own control client, and where the pane is now.

A viewer's client is the watcher's (``ignore-size``: see :mod:`roost.pane.tmux.paneview` for how
viewers share a pane) with one thing more: a caller can take a command's reply in stream
order, between the notifications around it, which is what lets a captured screen and the live
output that follows it line up exactly.
"""

from __future__ import annotations

from collections.abc import Callable

from roost.pane.tmux.controlclient import ControlClient
from roost.pane.tmux.notifications import Reply
from roost.pane.tmux.paint import FORMAT, PaneState
from roost.pane.tmux.server import PaneGone, Server

Settle = Callable[[Reply | None], None]


class ViewClient(ControlClient):
    """A control client whose replies a caller can take in stream order, between the
    notifications around them. It stands for a person with the pane open in a browser, so it
    counts among a session's attached clients where the daemon's watcher does not."""

    TERM = "roost-view"

    def ask(self, settle: Settle, *args: str) -> None:
        """Send one command; ``settle`` runs as its reply is read (None: the client ended)."""
        self._send(args, settle)


def where(server: Server, pane: str) -> PaneState:
    """The pane's state now, by a one-off tmux call; PaneGone when there is no such pane."""
    if not (pane.startswith("%") and pane[1:].isdigit()):
        raise PaneGone(f"{pane!r} is not a pane id (%N)")
    proc = server.run("display-message", "-p", "-t", pane, FORMAT, check=False)
    try:
        state = PaneState.parse(proc.stdout.decode(errors="replace").rstrip("\n"))
    except ValueError:
        raise PaneGone(f"no pane {pane}") from None
    if proc.returncode != 0 or state.pane != pane:
        raise PaneGone(f"no pane {pane}")
    if state.dead:
        raise PaneGone(f"pane {pane} has exited")
    return state
