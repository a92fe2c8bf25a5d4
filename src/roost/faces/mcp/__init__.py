"""rosterd's MCP server: the roster and the session actions as tools for agents.

Boundaries:

- It is a face beside the API: it reads the roster and acts through the runner and
  :mod:`roost.actions`, never through the API's routes, and refuses with the API's failures
  (the same ``code`` and message, as a tool error).
- It is served by the daemon, at ``/mcp`` on the API's own listeners: the 0600 unix socket and
  127.0.0.1 behind the bearer token and the web gate's Origin check.
- The caller is who the kernel says is at the other end of the unix socket, and the session
  that process runs in; nothing a caller sends names it.
- An agent gets no more than a person gave it: a session starts others under its own policy
  or a stricter one, and ``allow_always`` is a person's answer (:mod:`roost.faces.mcp.tools`).
- The official SDK (``mcp``) is loaded off the daemon's loop after it answers, never at import;
  importing this package loads none of the server either (the names below load their modules
  when first asked for), so the daemon serves its roster before any of it.
"""

from importlib import import_module

_HOMES = {
    "Context": "roost.faces.mcp.tools",
    "dispatcher": "roost.faces.mcp.tools",
    "McpServer": "roost.faces.mcp.server",
    "stdio": "roost.faces.mcp.bridge",
}

__all__ = ["Context", "McpServer", "dispatcher", "stdio"]


def __getattr__(name: str) -> object:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_HOMES[name]), name)
