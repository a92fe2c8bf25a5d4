"""Roost: drive many coding agents in persistent tmux sessions.

Layers, imports pointing down only:

- ``cli``, ``hook``: faces. They parse arguments and print; they never import each other.
- ``integrate``: installs and removes the per-harness adapters that call ``rosterd-hook``.
- ``state``: a pane's badge, its kept replies and the events log. Only this layer writes them.
- ``tmux``: talks to roost's own tmux server. It knows nothing of agents.
- ``agents``: per-harness data (binaries, exit commands, hook event maps), no behaviour.
"""

__version__ = "0.1.0"
