"""The operator's swarm routes on the local listeners: ``/swarm/nodes``, ``/swarm/invite``,
``/swarm/join``, ``/swarm/revoke`` and ``/swarm/leave``, what ``rosterd nodes``, ``invite``,
``join``, ``revoke`` and ``leave`` call.

They parse, call one verb of the daemon's :class:`roost.remote.mesh.node.Mesh` and render; the mesh
checks and refuses (a used or forged token is a 401 with its ``code``, an admitter that does
not answer a 502 ``peer_unreachable``). These are the unix socket's and the loopback
listener's (behind the bearer token), never the swarm listener's: a peer cannot invite,
revoke or make a node leave.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.faces.api import context, schemas
from roost.faces.api.body import read
from roost.faces.api.errors import Unavailable
from roost.faces.api.operations import operation

if TYPE_CHECKING:
    from roost.remote.mesh.node import Mesh


def _mesh(request: Request) -> Mesh:
    found = context.of(request).swarm
    if found is None:
        raise Unavailable("this daemon runs no swarm")
    return found


@operation(
    "this node, its swarm and every member with the last word from it",
    answers={200: ("SwarmNodes", "the members")},
    fails=(503,),
)
async def nodes(request: Request) -> JSONResponse:
    return JSONResponse(_mesh(request).nodes())


@operation(
    "a single-use invite token; the first one makes the swarm",
    answers={200: ("Invited", "the token")},
    fails=(400, 409),
    body=schemas.Invite,
)
async def invite(request: Request) -> JSONResponse:
    mesh = _mesh(request)
    ttl = (await read(request, schemas.Invite)).ttl_minutes
    made = mesh.invite(ttl)
    return JSONResponse(
        {
            "token": made.token,
            "swarm_id": made.swarm_id,
            "expires_at": made.expires_at,
            "created": made.created,
            "address": made.address,
        }
    )


@operation(
    "join the swarm of an invite, admitted by the node at its address",
    answers={200: ("SwarmNodes", "the members, this node among them")},
    fails=(400, 401, 409, 502, 503),
    body=schemas.Join,
)
async def join(request: Request) -> JSONResponse:
    mesh = _mesh(request)
    body = await read(request, schemas.Join)
    return JSONResponse(await mesh.join(body.address, body.token))


@operation(
    "revoke a member; every reachable member hears of it in the same round",
    answers={200: ("SwarmNodes", "the members, that one revoked")},
    fails=(400, 404, 409, 503),
    body=schemas.Revoke,
)
async def revoke(request: Request) -> JSONResponse:
    mesh = _mesh(request)
    body = await read(request, schemas.Revoke)
    return JSONResponse(await mesh.revoke(body.node_id, admitted=body.admitted))


@operation(
    "leave the swarm: revoke this node, tell every member, forget swarm.json",
    answers={200: ("SwarmNodes", "this node, in no swarm now")},
    fails=(400, 409, 503),
    body=schemas.NoBody,
)
async def leave(request: Request) -> JSONResponse:
    mesh = _mesh(request)
    await read(request, schemas.NoBody)
    return JSONResponse(await mesh.leave())
