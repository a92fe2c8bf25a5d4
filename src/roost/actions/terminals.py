"""Reading roost's terminals for a face: every pane with its session's badge, a pane's last
lines, a live view of one pane, the structure version a page follows, and whether the server
answers at all.

The roster only knows panes something has claimed, but the web app lists every terminal (a
plain shell is the normal case), so a terminal comes from tmux and its badge from the roster.
A face reads them here and renders them; it never holds roost's tmux server. A view's frames
and its failures are the terminal layer's own types (:mod:`roost.pane.tmux.view`,
:class:`~roost.pane.tmux.server.PaneGone`), named here for the face that draws them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from roost.actions.occupants import STATE_OF_ACTIVITY, current
from roost.actions.sessions import Door, Found
from roost.base.errors import RoostError, TargetGone, Unavailable
from roost.pane.state import words
from roost.pane.tmux.panes import list_all_within
from roost.pane.tmux.server import PaneGone, Server, TmuxError
from roost.pane.tmux.topology import Watch
from roost.pane.tmux.view import MAX_SIZE, Bytes, Closed, PaneView, Reset, Size

__all__ = [
    "MAX_SIZE",
    "Bytes",
    "Closed",
    "PaneGone",
    "PaneView",
    "Reset",
    "Size",
    "Terminal",
    "TmuxError",
    "Watch",
    "server_answers",
    "shared",
    "tail",
    "terminals",
    "view",
    "watch_terminals",
]

CWD = "pane_current_path"
LIST_WAIT = 3.0
"""Seconds the listing waits for tmux: a stopped server (SIGSTOP) never answers."""


@dataclass(frozen=True)
class Terminal:
    """One pane of roost's tmux server: ``pane`` (``%N``), tmux's ``session`` and ``window``
    names, its ``@roost-name``, what runs in front, its current folder, and its session's key
    and state (the web app's words) when a session occupies it."""

    pane: str
    session: str
    window: str
    name: str | None
    command: str
    cwd: str | None
    session_key: str | None
    state: str | None


async def terminals(door: Door) -> list[Terminal]:
    """Every live pane, from one ``list-panes -a``; none where the daemon watches no tmux server."""
    if door.tmux is None:
        return []
    try:
        panes = await list_all_within(door.tmux, LIST_WAIT, (words.NAME, CWD))
    except TimeoutError:
        raise Unavailable(f"roost's tmux server did not answer within {LIST_WAIT:.0f} s") from None
    roster, found = door.live.roster, []
    for pane in panes:
        if pane.dead:
            continue
        record = current(roster, door.tmux.socket, pane.id)
        found.append(
            Terminal(
                pane.id,
                pane.session,
                pane.window_name,
                pane.opt(words.NAME),
                pane.command,
                pane.opt(CWD),
                record.session_key if record else None,
                STATE_OF_ACTIVITY.get(record.activity) if record else None,
            )
        )
    return found


SHARED = ("pane", "session", "window", "name", "command", "cwd")
"""What the swarm is told of each terminal (:func:`shared`)."""


async def shared(door: Door) -> list[dict[str, str | None]]:
    """Every live pane as this node tells the other nodes of its swarm (``docs/swarm.md``,
    "Terminals"): :func:`terminals`' fields less the session key and state, which each
    node's roster already tells."""
    return [{field: getattr(terminal, field) for field in SHARED} for terminal in await terminals(door)]


def _last_lines(server: Server, pane: str, count: int) -> list[str] | None:
    proc = server.run("capture-pane", "-p", "-J", "-t", pane, check=False)
    if proc.returncode != 0:
        return None
    text = proc.stdout.decode(errors="replace")
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    return lines[-count:]


async def tail(door: Door, pane: str, count: int) -> list[str]:
    """The pane's last ``count`` non-blank screen lines (wrapped lines joined, no escapes),
    oldest first; TargetGone when it is no pane of roost's tmux server."""
    if door.tmux is None:
        raise Unavailable("this daemon watches no tmux server")
    lines = await asyncio.to_thread(_last_lines, door.tmux, pane, count)
    if lines is None:
        raise TargetGone(f"no terminal {pane}")
    return lines


def view(door: Door, target: str | Found) -> PaneView:
    """A view of the pane ``target`` names, not yet open; PaneGone (which a browser is told as
    the pane closing) when there is none."""
    if door.tmux is None:
        raise PaneGone("this daemon watches no tmux server")
    try:
        pane = door.pane(target)
    except RoostError as error:
        raise PaneGone(error.message) from None
    return PaneView(door.tmux, pane, taps=door.taps)


def watch_terminals(door: Door) -> Watch:
    """A follower of tmux's structure version: it moves when panes, windows or sessions change."""
    return door.topology.watch()


def server_answers() -> tuple[str, bool]:
    """roost's tmux server as this environment names it: its socket, and whether it answers
    (OSError when tmux cannot be run at all). ``rosterd doctor`` asks, with no daemon needed."""
    server = Server.from_env()
    return server.socket, server.running()
