"""What a viewer of a pane receives, in order: repaints, output, size changes, the end.

:class:`roost.pane.tmux.paneview.PaneView` produces these and a face (the terminal WebSocket)
sends them on; neither needs the other's types.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Reset:
    """Clear the terminal, resize it to ``cols`` x ``rows``, then write ``data``."""

    cols: int
    rows: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Bytes:
    """Live output, to write as it is."""

    data: bytes


@dataclass(frozen=True, slots=True)
class Size:
    """The pane is now ``cols`` x ``rows``: resize the terminal before writing more."""

    cols: int
    rows: int


@dataclass(frozen=True, slots=True)
class Closed:
    """The view ended; ``reason`` says why in a person's words."""

    reason: str


Frame = Reset | Bytes | Size | Closed
