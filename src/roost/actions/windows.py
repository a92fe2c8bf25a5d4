"""Starting a command in a new window of roost's tmux server: the web launcher's ``POST /launch``.

The window opens the way ``roost spawn`` opens one (the same tmux helpers): at the end of
session ``main`` (made, with the server, when missing), the pane's own session id and reports
endpoint in its environment (``pane/state/newpane.py``), the name on the window and in
``@roost-name``; and the PATH the launcher searched (:mod:`roost.actions.runnable`), so what
it found is what runs. What to run has been checked completely before this is called, so a
bad request creates nothing.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from roost.actions.sessions import Door
from roost.base.errors import Unavailable
from roost.pane.state import newpane, panestate, words, worktrees
from roost.pane.tmux import placement, sessions
from roost.pane.tmux.server import Server, TmuxError
from roost.pane.tmux.targets import DEFAULT_SESSION


@dataclass(frozen=True)
class Launched:
    """The new window's pane (``%N``), the tmux session it is in, its name, the agent the
    launcher started in it (None for a command), the folder it runs in, and the git worktree
    and branch it was given (None without one)."""

    pane: str
    session: str
    name: str
    agent: str | None
    cwd: str
    worktree: str | None = None
    branch: str | None = None


def _open_window(server: Server, name: str, command: str, cwd: str, env: dict[str, str]) -> str:
    born = newpane.birth(env)
    # Named in the call that opens it: a terminal list taken between the open and a later
    # label (a peer's union, the page) would otherwise say no name, and no tmux notice follows.
    born.pane_options = {**born.pane_options, words.NAME: name}
    if sessions.has_session(server, DEFAULT_SESSION):
        pane = placement.new_window(server, DEFAULT_SESSION, name, command, cwd, born).pane
    else:
        pane = sessions.new_session(server, DEFAULT_SESSION, command, cwd=cwd, window_name=name, birth=born)
    panestate.label(server, pane, name)
    return pane


def _open(
    server: Server,
    name: str,
    command: str,
    cwd: str,
    planned: worktrees.Planned | None,
    env: dict[str, str],
) -> str:
    if planned is None:
        return _open_window(server, name, command, cwd, env)
    worktrees.create(planned)
    pane = _open_window(server, name, command, planned.path, env)
    panestate.worktree(server, pane, planned.path, planned.branch)
    return pane


async def launch(
    door: Door,
    name: str,
    command: str,
    cwd: str,
    *,
    path: str | None = None,
    worktree: bool = False,
    branch: str | None = None,
    agent: str | None = None,
) -> Launched:
    """Run ``command`` in ``cwd`` in a new window called ``name``, with ``path`` as its PATH
    (None: the server's); with ``worktree``, in a new git worktree and branch from ``cwd``'s
    repository, as ``roost spawn --worktree``. Unavailable when the daemon watches no tmux
    server or tmux could not open it, and the worktree's refusals (no repository, a branch or
    folder that exists) before anything is made."""
    if door.tmux is None:
        raise Unavailable("this daemon watches no tmux server")
    planned = await asyncio.to_thread(worktrees.plan, cwd, name, branch) if worktree else None
    env = {} if path is None else {"PATH": path}
    try:
        pane = await asyncio.to_thread(_open, door.tmux, name, command, cwd, planned, env)
    except TmuxError as error:
        raise Unavailable(f"tmux could not open the window: {error}") from None
    if planned is None:
        return Launched(pane, DEFAULT_SESSION, name, agent, cwd)
    return Launched(pane, DEFAULT_SESSION, name, agent, planned.path, planned.path, planned.branch)
