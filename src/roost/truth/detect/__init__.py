"""Detection: what the daemon can observe about agent sessions, turned into claims.

Boundaries:

- Detectors produce claims and never set state; only the roster applies claims.
- A detector reads the world (processes, tmux pane options, a pane's screen) and reports what
  it saw; it never writes a pane option or signals a process, and keeps no prompt or reply text.
- What differs per agent is data from the agent manifests (binaries, aliases, screen rules);
  the engine never names an agent.
"""
