"""A tool call on a session another node owns: sent to the owner, answered as it answers.

``session.find``, ``read_state``, ``send``, ``fork``, ``cancel``, ``allow`` and ``deny`` name a
session; when the door finds it owned by another node, the tool does not act here but hands
the owner the same call (:class:`roost.actions.remote.Act`, face ``mcp``) with the session
named by its exact key. The owner runs its own tool under its own MCP fences (an
``allow_always`` its config keeps off stays off) and its answer is the tool's: its result, or
its refusal with the owner's status, code and message (:class:`roost.errors.Relayed`).
"""

from __future__ import annotations

import json
import time
from typing import Any

from roost.actions import remote
from roost.actions.door import Door, Found
from roost.actions.remote import MCP, Act
from roost.errors import Relayed
from roost.mcpserver import inputs
from roost.mcpserver.caller import Caller

VIA = "mcp"
OWN_WORDS = ("error", "status", "message")
"""Fields of an owner's refusal this node words itself: the message, and the status it answered."""


async def relay(door: Door, caller: Caller, tool: str, args: inputs.Input, found: Found) -> dict[str, Any]:
    """The owner's answer to ``tool`` called with ``args`` on the session ``found``."""
    assert found.owner is not None and found.key is not None
    body = json.dumps({**args.model_dump(mode="json", exclude_unset=True), "name": found.key})
    act = Act(found.key, MCP, tool, body, caller.label(), VIA, remote.waiting(body, time.time()))
    return await _answer(door, found.owner, found.node or found.owner, act)


async def relay_start(
    door: Door, caller: Caller, tool: str, arguments: dict[str, Any], node_id: str
) -> dict[str, Any]:
    """Another node's answer to ``tool`` (a start: it names no session) called with ``arguments``."""
    body = json.dumps(arguments)
    act = Act(None, MCP, tool, body, caller.label(), VIA)
    name = door.forwarder.name(node_id) if door.forwarder is not None else node_id
    return await _answer(door, node_id, name, act)


async def _answer(door: Door, owner: str, node: str, act: Act) -> dict[str, Any]:
    reply = await remote.forward(door.forwarder, owner, act)
    answer: dict[str, Any] = json.loads(reply.body)  # an object: the forwarder checked it
    if reply.status != 200:
        said = answer.get("error")
        extra = {name: value for name, value in answer.items() if name not in OWN_WORDS}
        raise Relayed(str(said or f"{node} answered {reply.status}"), status=reply.status, **extra)
    return answer
