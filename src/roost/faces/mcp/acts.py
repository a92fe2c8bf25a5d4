"""The owner's side of a tool call another node forwarded: this node's own tool, its own fences.

The call arrives as an :class:`roost.actions.remote.Act` of face ``mcp`` through the swarm
listener's ``POST /swarm/act`` (:mod:`roost.remote.mesh.acts`). It runs as
:func:`roost.faces.mcp.tools.call` runs every call: the same input model, the same tool, this
node's ``[mcp]`` config, with a caller that is no process here (held to the strictest policy)
and is named for the journal as the forwarding node said, through that node. It is done on a
door that finds only this node's sessions, so a forwarded call never goes on to a third node.
"""

from __future__ import annotations

import dataclasses
import json

from starlette.requests import Request

from roost.actions.remote import Act, Dispatch, Reply, Through
from roost.base.errors import TargetGone, UsageError
from roost.faces.mcp.caller import Caller
from roost.faces.mcp.tools import TOOLS, Context, call, failure


def dispatcher(context: Context) -> Dispatch:
    """Forwarded tool calls, run by this node's tools through a door of its own sessions only."""
    own = dataclasses.replace(context, door=dataclasses.replace(context.door, forwarder=None))

    async def dispatch(act: Act, came: Through, _request: Request) -> Reply:
        tool = TOOLS.get(act.verb)
        if tool is None:
            return _reply(failure(TargetGone(f"no tool {act.verb!r} on this node", code="no_such_verb")))
        try:
            arguments = json.loads(act.body)
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            return _reply(failure(UsageError("a tool's arguments are a JSON object", field="arguments")))
        result, refused = await call(own, tool, Caller(by=came.by, through=came.node), arguments)
        return _reply(result) if refused else Reply(200, json.dumps(result).encode())

    return dispatch


def _reply(refusal: dict[str, object]) -> Reply:
    status = refusal.get("status")
    return Reply(status if isinstance(status, int) else 500, json.dumps(refusal).encode())
