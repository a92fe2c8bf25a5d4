"""The web app's launcher: which agents it can start (``GET /launcher``), and starting one
(``POST /launch``) in a new window of roost's tmux server.

Every agent with a manifest is listed, those installed first, each part in its manifest's
``rank`` order (the unranked after, by name), with whether its binary is found where the
person can run it now (:mod:`roost.actions.runnable`: their login shell's PATH, roost's tmux
server's, the daemon's, asked again on every listing and launch): a missing one is shown as
"not installed" and refused here too (409), so a person never lands in a window that only
says "command not found". Beside the agents, the person's own shell and a custom command run
the same way, unlabelled, with that same PATH.

The listing also says which harnesses can run headless (``POST /sessions``, no terminal): those
the daemon's runner has an ACP adapter for, the manifests' defaults and any ``[harness.NAME]``
of the config, which may name a harness no manifest describes.

A launch opens the window the way ``roost spawn`` does (:mod:`roost.actions.launch`). An agent
whose manifest has an ``[mcp]`` table is told of rosterd's MCP server on its command line.
Everything in the body is checked here before the action touches tmux, so a bad request
creates nothing.
"""

from __future__ import annotations

import asyncio
import os
import shlex
from collections.abc import Collection
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.actions import runnable, windows
from roost.actions.headless import harnesses
from roost.agents import manifest, mcpconfig
from roost.agents.mcpconfig import StdioServer
from roost.faces.api import context, schemas
from roost.faces.api.body import read
from roost.faces.api.errors import BadRequest, Conflict
from roost.faces.api.operations import operation
from roost.truth.roster import answer


def agents(path: str, headless: Collection[str] = ()) -> list[dict[str, Any]]:
    """Each agent with a binary to start, those found on ``path`` first: name, display name,
    binary, whether it is installed, and whether it is among the ``headless`` harnesses."""
    listed = []
    for entry in manifest.ordered():
        if not entry.binaries:
            continue
        binary = entry.binaries[0]
        listed.append(
            {
                "name": entry.name,
                "display": entry.display,
                "binary": binary,
                "installed": runnable.which(binary, path) is not None,
                "headless": entry.name in headless,
            }
        )
    return sorted(listed, key=lambda agent: not agent["installed"])


@operation(
    "the agents the launcher can start, and the harnesses it can start headless",
    answers={200: ("Launcher", "the agents")},
)
async def listing(request: Request) -> JSONResponse:
    door = context.of(request).door
    adapters = harnesses(door)
    path = await asyncio.to_thread(runnable.search_path, door)
    found = await asyncio.to_thread(agents, path, adapters)
    # The harnesses a headless session can run here: the agents' first, in their order.
    named = [agent["name"] for agent in found if agent["headless"]]
    startable = named + sorted(adapters - set(named))
    body = {
        "home": os.path.expanduser("~"),
        "agents": found,
        "shell": runnable.login_shell(),
        "custom": True,
        "headless": startable,
    }
    return JSONResponse(body)


def folder(value: str) -> str:
    """The folder to start in: absolute (``~`` is the daemon's home), existing, a directory."""
    path = os.path.expanduser(value) if value.startswith("~") else value
    if not os.path.isabs(path):
        raise BadRequest(f"cwd must be an absolute path, not {value!r}", field="cwd")
    if not os.path.exists(path):
        raise BadRequest(f"cwd {value!r} does not exist", field="cwd")
    if not os.path.isdir(path):
        raise BadRequest(f"cwd {value!r} is not a directory", field="cwd")
    return os.path.normpath(path)


def plan(body: schemas.Launch, path: str, mcp: StdioServer | None = None) -> dict[str, Any]:
    """What to launch, checked completely: the schema has checked the shape of every field;
    here, what only the machine knows (the folder, the agent and its binary on ``path``). An
    agent is told of the ``mcp`` server on its command line."""
    cwd, name = folder(body.cwd), body.name
    if body.command is not None:
        command = body.command
        return {
            "agent": None,
            "command": command,
            "cwd": cwd,
            "name": name or command.split()[0][: schemas.WINDOW_NAME],
        }
    agent = body.agent
    known = {entry["name"]: entry for entry in agents(path)}
    if agent not in known:
        raise BadRequest(f"unknown agent {agent!r}; known: {', '.join(known)}", field="agent")
    entry = known[agent]
    found = runnable.which(entry["binary"], path)
    if found is None:
        missing = f"{entry['binary']!r} is not on your login shell's PATH, roost's tmux server's or rosterd's"
        raise Conflict(f"{entry['display']} is not installed: {missing}", agent=agent)
    command = shlex.join([found, *told_of(agent, mcp)])
    return {"agent": agent, "command": command, "cwd": cwd, "name": name or agent}


def told_of(agent: str, server: StdioServer | None) -> list[str]:
    """The arguments that tell ``agent``'s CLI of rosterd's MCP server, as its manifest's
    ``[mcp]`` table says; none for an agent without one, or a daemon that serves none."""
    found = manifest.load(agent)
    if server is None or found is None or found.mcp is None:
        return []
    return mcpconfig.arguments(found.mcp.args, server)


@operation(
    "start an agent or a command in a new window of session main",
    answers={201: ("Launched", "the window")},
    fails=(400, 409, 413, 503),
    body=schemas.Launch,
)
async def launch(request: Request) -> JSONResponse:
    daemon = context.of(request)
    body = await read(request, schemas.Launch)
    path = await asyncio.to_thread(runnable.search_path, daemon.door)
    wanted = plan(body, path, daemon.mcp)
    opened = await windows.launch(
        daemon.door,
        wanted["name"],
        wanted["command"],
        wanted["cwd"],
        path=path,
        worktree=body.worktree,
        branch=body.branch,
        agent=wanted["agent"],
    )
    return JSONResponse(answer(opened), status_code=201)
