"""The size a view asks tmux for: the window that gives its pane the size the browser wants.

A browser asks for a pane size; tmux sizes windows. A window holds the pane, its border line
and any panes beside it, so the window asked for is the pane wanted plus what the window has
around the pane now. The request is made twice (see :mod:`roost.pane.tmux.paneview`): as the
control client's own size, which the session's other windows take, and for the pane's window.
"""

from __future__ import annotations

from roost.pane.tmux.paint import PaneState

MAX_SIZE = 10_000
"""tmux's largest window, in columns or rows."""


def check(cols: int, rows: int) -> tuple[int, int]:
    """``(cols, rows)``, or ValueError when no terminal is that size."""
    if not (0 < cols <= MAX_SIZE and 0 < rows <= MAX_SIZE):
        raise ValueError(f"{cols}x{rows} is not a terminal size")
    return cols, rows


def window_for(wanted: tuple[int, int], state: PaneState) -> tuple[int, int]:
    """The window size that makes the pane ``wanted``, within tmux's largest."""
    extra_x = max(0, state.window_size[0] - state.size[0])
    extra_y = max(0, state.window_size[1] - state.size[1])
    return min(MAX_SIZE, wanted[0] + extra_x), min(MAX_SIZE, wanted[1] + extra_y)


def commands(wanted: tuple[int, int] | None, state: PaneState | None) -> list[tuple[str, ...]]:
    """The two ``refresh-client -C`` requests for ``wanted``; none before a size is wanted."""
    if wanted is None or state is None:
        return []
    cols, rows = window_for(wanted, state)
    size = f"{cols}x{rows}"
    return [("refresh-client", "-C", size), ("refresh-client", "-C", f"{state.window}:{size}")]
