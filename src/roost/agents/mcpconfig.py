"""How a harness is told of an MCP server: the server's command line, and each CLI's way of
taking it.

rosterd's MCP server is reached through a stdio command (``rosterd mcp``, see
:mod:`roost.faces.mcp`), so what a harness needs is that command: the runner hands it to an ACP
adapter in ``session/new``, and the launcher puts it on a CLI's command line the way the agent's
manifest says (``[mcp] args``). What differs per CLI is that template, never code here.

A template is a list of arguments in which these placeholders are replaced (plain text, not
``str.format``, so JSON braces in a template stay as they are):

===============  ======================================================================
``{name}``       the server's name (``rosterd``)
``{command}``    the executable, as a JSON string (which is also a TOML string)
``{args}``       its arguments, as a JSON array of strings (also a TOML array)
``{config}``     ``{"mcpServers": {NAME: {"command": …, "args": […]}}}``, the JSON most CLIs read
===============  ======================================================================
"""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class StdioServer:
    """An MCP server a harness starts as a child and speaks to on its stdin and stdout."""

    name: str
    command: str
    """The executable, an absolute path (ACP asks for one)."""
    args: tuple[str, ...] = ()

    def entry(self) -> dict[str, object]:
        """The server as a ``mcpServers`` entry names it."""
        return {"command": self.command, "args": list(self.args)}


def arguments(template: tuple[str, ...], server: StdioServer) -> list[str]:
    """``template`` with the placeholders filled in for ``server`` (see the module docstring)."""
    values = {
        "{name}": server.name,
        "{command}": json.dumps(server.command),
        "{args}": json.dumps(list(server.args)),
        "{config}": json.dumps({"mcpServers": {server.name: server.entry()}}),
    }
    filled = []
    for argument in template:
        for placeholder, value in values.items():
            argument = argument.replace(placeholder, value)
        filled.append(argument)
    return filled
