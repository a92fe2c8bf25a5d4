"""Roost: drive many coding agents in persistent tmux sessions.

The tree is the map: ten folders, each a layer or a lane. Layers, top to bottom; a module
imports its own package and rows below, never up or sideways (the diagram in
``docs/architecture.md`` is the rule, and ``tests/test_layers.py`` holds it; start with
``docs/reading.md``):

- ``faces/cli/roost``, ``faces/cli/rosterd``, ``faces/hook``, ``headless/holder``: the
  programs people, agents, tmux and the daemon run (the holder keeps one headless session's
  ACP adapter, so it lives with its lane).
- ``faces/cli``: what the two CLIs share (output to a reader, installation checks, the client).
- ``daemon``: ``rosterd daemon``, the one composition root that builds and wires the rest.
- ``faces/api``, ``faces/mcp``, ``faces/web``: the HTTP, SSE and WebSocket routes over the
  roster; the MCP server (rosterd's tools for agents); the web app's files.
- ``remote/mesh``: the swarm on the wire: its listener (TLS pinned to the members, a signed
  door), the signed dialer, membership and ``swarm.json`` while the daemon runs, rounds.
- ``actions``: what every face does to a session, through one door that finds it once and
  alone knows its lane (a tmux pane, a headless session, another node's session).
- ``services/notify``, ``services/integrate``, ``headless/runner``, ``services/ledger``,
  ``remote/swarm``: push notifications and webhooks; installing agent adapters; headless
  sessions over ACP; the journal and token usage; the swarm's pure core (identity, invites,
  member records, signed requests).
- ``services/autostart``: the daemon as a per-user service, a systemd user unit or a LaunchAgent.
- ``truth/detect``: the process scan, screen rules and self-reports, turned into claims.
- ``truth/roster``: claims, precedence, occupants and the live feed of changes.
- ``pane/state``: a pane's badge, its kept replies and the events log. Only this layer writes them.
- ``pane/tmux``: roost's own tmux server. It knows nothing of agents.
- ``agents``: per-harness data (binaries, exit commands, hook event maps), no behaviour.
- ``base/validation``: the typed checks (pydantic) request bodies and claims are made of.
- ``base``: leaves that import nothing of roost above them: paths, failures, files, JSON,
  text, /proc (one reader, for the hook, the badge and the scan alike), the one client of
  the daemon's socket, a status row's words.
"""

__version__ = "0.1.0"
