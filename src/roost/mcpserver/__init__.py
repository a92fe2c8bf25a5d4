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
  or a stricter one, and ``allow_always`` is a person's answer (:mod:`roost.mcpserver.grants`).
- The official SDK (``mcp``) is loaded off the daemon's loop after it answers, never at import.
"""

from roost.mcpserver.bridge import stdio
from roost.mcpserver.server import McpServer
from roost.mcpserver.tools import Context

__all__ = ["Context", "McpServer", "stdio"]
