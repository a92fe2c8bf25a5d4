"""Starting a command in a new window of roost's tmux server: the web launcher's ``POST /launch``.

The window opens the way ``roost spawn`` opens one (the same tmux helpers): at the end of
session ``main`` (made, with the server, when missing), the pane's own session id and reports
endpoint in its environment (``state/newpane.py``), the name on the window and in
``@roost-name``. What to run has been checked completely before this is called, so a bad
request creates nothing.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from roost.actions.door import Door
from roost.errors import Unavailable
from roost.state import newpane, panestate
from roost.tmux import placement, sessions
from roost.tmux.server import Server, TmuxError
from roost.tmux.targets import DEFAULT_SESSION


@dataclass(frozen=True)
class Launched:
    """The new window's pane (``%N``) and the tmux session it is in."""

    pane: str
    session: str


def _open_window(server: Server, name: str, command: str, cwd: str) -> str:
    if sessions.has_session(server, DEFAULT_SESSION):
        pane = placement.new_window(server, DEFAULT_SESSION, name, command, cwd, newpane.birth()).pane
    else:
        pane = sessions.new_session(
            server, DEFAULT_SESSION, command, cwd=cwd, window_name=name, birth=newpane.birth()
        )
    panestate.label(server, pane, name)
    return pane


async def launch(door: Door, name: str, command: str, cwd: str) -> Launched:
    """Run ``command`` in ``cwd`` in a new window called ``name``; Unavailable when the daemon
    watches no tmux server or tmux could not open it."""
    if door.tmux is None:
        raise Unavailable("this daemon watches no tmux server")
    try:
        pane = await asyncio.to_thread(_open_window, door.tmux, name, command, cwd)
    except TmuxError as error:
        raise Unavailable(f"tmux could not open the window: {error}") from None
    return Launched(pane, DEFAULT_SESSION)
