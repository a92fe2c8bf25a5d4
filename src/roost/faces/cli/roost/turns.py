"""Which panes have turns, said the same way by every verb that names one.

A turn is the agent's own record: its hook numbers each prompt it takes (``@roost-turn``) and
marks each one it finishes. roost never makes one up from a screen, so a pane whose program
reports nothing (a plain shell, an agent without its integration) has none: ``send`` still
submits to it, names no turn and says why, and ``wait-done --turn`` and ``read --turn`` given
the empty turn a script read from that silence say what to do instead.
"""

from __future__ import annotations

WHO = "only an agent whose integration is installed numbers its turns (rosterd integrate install claude, …)"
"""The panes that have turns."""


def empty(instead: str) -> str:
    """What ``--turn ''`` is told: roost send printed no turn, and why that happens."""
    return (
        f"--turn is empty: roost send prints '%N TURN' only when a turn began, and {WHO}; "
        f"a plain shell has none — {instead}, or look at it with roost screen"
    )
