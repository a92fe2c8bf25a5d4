"""Raw bytes into a pane, unfenced: the independent surface beside the fenced prompt.

No pins, no state checks, no encoding: the bytes are written exactly as given (no
bracketed-paste markers, line feeds kept as line feeds, no Enter added), in one tmux call,
once, under the pane's send lock so they never land inside a prompt. Any pane of roost's tmux
server can take them, whether or not an agent runs in it. The bytes are not logged or stored:
the paste buffer is deleted as it is pasted.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from roost.actions.prompt import DEFINITE_FAILURES
from roost.actions.sessions import Door, Found
from roost.base.errors import TargetGone, Unavailable
from roost.pane.tmux import paste
from roost.pane.tmux.server import Server


@dataclass(frozen=True)
class Written:
    """The pane the bytes went to, and how many."""

    pane: str
    written_bytes: int


def _write(tmux: Server, pane: str, data: bytes) -> tuple[int, str]:
    with paste.pane_lock(tmux, pane):
        proc = paste.paste_once(tmux, pane, data, bracket=False, raw=True)
    return proc.returncode, proc.stderr.decode(errors="replace").strip()


async def write(door: Door, target: str | Found, data: bytes) -> Written:
    """Write ``data`` to the pane ``target`` names; TargetGone when that pane is gone,
    Unavailable when tmux failed otherwise."""
    found = door.local(target)
    pane = door.pane(found)
    assert door.tmux is not None, "a pane is only found on a door with roost's tmux server"
    code, error = await asyncio.to_thread(_write, door.tmux, pane, data)
    if code != 0:
        if any(failure in error for failure in DEFINITE_FAILURES):
            raise TargetGone(f"no session {found.name!r}")
        raise Unavailable(f"tmux could not write to {pane}: {error}")
    return Written(pane, len(data))
