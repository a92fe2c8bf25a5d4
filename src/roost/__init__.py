"""Roost: drive many coding agents in persistent tmux sessions.

Layers, top to bottom; a module imports its own package and rows below, never up or sideways
(the diagram in ``docs/architecture.md`` is the rule, and ``tests/test_layers.py`` holds it):

- ``cli/roost``, ``cli/rosterd``, ``hook``, ``holder``: the faces people, agents, tmux and the
  daemon run (the holder keeps one headless session's ACP adapter).
- ``cli``: what the two CLIs share (output to a reader, installation checks).
- ``daemon``: ``rosterd daemon``, the one composition root that builds and wires the rest.
- ``api``, ``mcpserver``: the HTTP, SSE and WebSocket routes over the roster; the MCP server
  (rosterd's tools for agents), served by the daemon beside them.
- ``mesh``: the swarm on the wire: its listener (TLS pinned to the members, a signed door),
  the signed dialer, membership and ``swarm.json`` while the daemon runs, discovery rounds.
- ``actions``: what every face (the API, MCP, the CLIs through the API) does to a session,
  through one door that finds it once and alone knows its lane (a headless session or a tmux
  pane): prompting it, raw input, the headless verbs, naming, answering a permission, a
  launcher's window, and reading the terminals.
- ``notify``, ``integrate``, ``runner``, ``ledger``, ``swarm``: push notifications; installing
  and removing agent adapters; headless sessions over ACP (holders started, driven, suspended,
  resumed); the journal of session lifecycles and answers, and token usage, kept on disk; the
  swarm's pure core (a node's identity, invites, member records, signed requests between nodes).
- ``service``: the daemon as a per-user service, a systemd user unit or a LaunchAgent.
- ``detect``: the process scan, screen rules and self-reports, turned into claims.
- ``roster``: claims, precedence, occupants and the live feed of changes.
- ``state``: a pane's badge, its kept replies and the events log. Only this layer writes them.
- ``tmux``: roost's own tmux server. It knows nothing of agents.
- ``agents``: per-harness data (binaries, exit commands, hook event maps), no behaviour.
- ``validation``: the typed checks (pydantic) request bodies and claims are made of.
- ``paths``, ``errors``, ``files``, ``cjson``, ``markdown``, ``agentrow``, ``web``, ``text``,
  ``procfs``, ``unixhttp``: leaves that import nothing of roost (procfs is the one reader of
  ``/proc/PID/stat``, for the hook, the pane's badge and the scan alike; unixhttp the one
  client of the daemon's socket, for the hook, the gate and both CLIs).
"""

__version__ = "0.1.0"
