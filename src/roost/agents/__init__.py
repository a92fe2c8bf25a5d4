"""Per-harness knowledge as data: one TOML manifest per agent, never code per agent.

A manifest names the agent's binaries and aliases, the command that makes it exit, the
command that resumes a session, and how its hook events map to roost's actions. Users can
add or override manifests in ``${XDG_CONFIG_HOME}/roost/agents/``.
"""
