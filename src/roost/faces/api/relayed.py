"""``GET /ws/swarm/{node}/terminal/{key}``: the terminal of a session ``node`` owns, opened
through this node, in the protocol of :mod:`roost.faces.api.terminal`.

``node`` is a member's name or id; ``key`` names the session on it (its key, or a name the
owner resolves). For this node's own name the terminal opens here, as ``/ws/terminal/{key}``
would. For a member, this node opens one signed WebSocket to it and relays every message
unchanged both ways (:mod:`roost.remote.mesh.relay`); the owner checks each browser message, and
its closes reach the browser as it sent them. Who may open it here is decided as for every
terminal (:mod:`roost.faces.api.gate`: the login cookie and this daemon's Origin, or the token).

- a node that is no member of this node's swarm, or a name two members go by:
  ``{"type":"closed"}`` with the reason, then 1000;
- a member that does not answer: closed with 1013 (try again later) and why, from which the
  browser reconnects with its backoff, as after a restart of its own node;
- a link lost while open: 1011, and the same.
"""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.websockets import WebSocket

from roost.actions.remote import node_named
from roost.base.errors import PeerUnreachable, RoostError
from roost.faces.api.context import Context
from roost.faces.api.terminal import NORMAL, serve, start_size
from roost.remote.mesh.relay import TRY_LATER, pipe


async def terminal(websocket: WebSocket) -> None:
    daemon: Context = websocket.app.state.context
    await websocket.accept()
    node, key = websocket.path_params["node"], websocket.path_params["key"]
    roster, mesh = daemon.live.roster, daemon.swarm
    try:
        owner = node_named(daemon.door.forwarder, roster.node_id, roster.node, node)
    except RoostError as error:  # no such node, or one of several going by that name
        await websocket.send_json({"type": "closed", "reason": error.message})
        await websocket.close(NORMAL, error.message[:120])
        return
    if owner == roster.node_id:
        await serve(websocket, daemon, key)
        return
    assert mesh is not None  # another node is named only in a swarm
    cols, rows = start_size(websocket)
    query = urlencode({"cols": cols, "rows": rows}) if cols is not None and rows is not None else ""
    try:
        async with mesh.relay.open(owner, key, query) as link:
            await pipe(websocket, link)
    except PeerUnreachable as lost:
        await websocket.close(TRY_LATER, lost.message[:120])
