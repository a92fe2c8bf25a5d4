"""How a harness reaches the MCP server: ``rosterd mcp``, a stdio command it starts as a child.

The bridge relays each JSON-RPC line between its stdin and stdout and the daemon's unix socket
(``POST /mcp``), so a harness needs neither the loopback token nor a URL, and the daemon sees
the bridge as the peer of each call: the bridge's parent is the harness, so the caller is the
harness's session. The runner hands this command to every ACP adapter, and the launcher writes
it into each CLI's command line as its manifest's ``[mcp]`` table says.
"""

from __future__ import annotations

import sys
from pathlib import Path

from roost.agents.mcpconfig import StdioServer

NAME = "rosterd"
MODULE = "roost.faces.cli.rosterd"


def stdio(socket: Path) -> StdioServer:
    """The bridge to the daemon listening on ``socket``, run by this interpreter (an absolute
    path, so no harness depends on its PATH to find roost)."""
    return StdioServer(NAME, sys.executable, ("-m", MODULE, "mcp", "--socket", str(socket)))
