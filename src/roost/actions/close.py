"""Closing a session, whatever its lane: what ``POST /sessions/{key}/close`` and ``rosterd close``
do.

A headless session is ended as :func:`roost.actions.headless.stop` ends it: its holder, its
adapter and every process under them. A session in a pane of roost's tmux server (or a bare
``%N``) is closed as ``roost close`` closes it (:mod:`roost.actions.paneclose`): its agent is
typed its exit command, given ``timeout`` seconds to leave, then its one pane is closed, with
the same refusals, each raised before anything is typed or closed. A session in neither (an
agent in some other terminal) is rosterd's to see, not to close: that is refused too.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from roost.actions import headless
from roost.actions.paneclose import DEFAULT_TIMEOUT, Left, leave
from roost.actions.sessions import Door, Found
from roost.base.errors import Conflict
from roost.truth.roster import Record


@dataclass(frozen=True)
class Closed:
    """A session closed: its record as the roster holds it after (a headless one's ended; a
    pane's ends once the roster sees the pane gone, a moment later), and for a pane how it was
    left (its ``%N``, its badge as found, the agent, what was typed, whether ``force`` closed it
    unasked), each None (``forced`` False) for a headless session."""

    record: Record | None
    pane: str | None = None
    state: str | None = None
    harness: str | None = None
    exit_command: str | None = None
    forced: bool = False

    @classmethod
    def of_pane(cls, record: Record | None, left: Left) -> Closed:
        return cls(record, left.pane, left.state, left.harness, left.exit_command, left.forced)


async def close(
    door: Door, target: str | Found, *, force: bool = False, timeout: float = DEFAULT_TIMEOUT
) -> Closed:
    """Close the session (or the bare pane) ``target`` names. ``force`` closes a pane whose agent
    is busy, blocked or unknown without typing anything; ``timeout`` is how long its agent has
    to leave. TargetGone, Conflict, UsageError and TimedOut as :mod:`roost.actions.paneclose` says,
    Conflict (``not_closable``) for a session in no pane of roost's tmux server."""
    found = door.find(target)
    if found.headless:
        return Closed(await headless.stop(door, found))
    if found.pane is None or door.tmux is None:
        raise Conflict(
            f"{found.name} runs in no pane of roost's tmux server and is no headless session: "
            "close it where it runs",
            code="not_closable",
        )
    left = await asyncio.to_thread(leave, door.tmux, found.pane, force=force, timeout=timeout)
    return Closed.of_pane(door.live.roster.record(found.key) if found.key else None, left)
