"""Roost's own tmux server: running commands, reading panes, pasting, capturing screens.

This layer knows nothing of agents. It turns roost's intentions into tmux commands and
tmux's answers into plain values; the state layer above decides what a value means.
"""

from roost.pane.tmux.server import Server, TmuxError

__all__ = ["Server", "TmuxError"]
