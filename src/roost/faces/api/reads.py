"""Routes that read the roster: the snapshot, one session, its explain view, the node's status."""

from __future__ import annotations

from collections import Counter

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost import __version__
from roost.faces.api import context
from roost.faces.api.errors import NotFound
from roost.faces.api.operations import KEY, operation
from roost.truth.roster import records, to_json
from roost.truth.roster.times import to_wire


@operation("the whole roster (rosterd.snapshot.v1)", answers={200: ("Snapshot", "the roster")})
async def snapshot(request: Request) -> JSONResponse:
    return JSONResponse(context.of(request).live.roster.snapshot())


@operation("one session's record", answers={200: ("Record", "the record")}, fails=(404, 409), params=(KEY,))
async def session(request: Request) -> JSONResponse:
    return JSONResponse(to_json(context.of(request).door.session(request.path_params["key"])))


@operation(
    "which source set each field, what was shadowed or refused",
    answers={200: ("Explain", "the explanation")},
    fails=(404, 409),
    params=(KEY,),
)
async def explain(request: Request) -> JSONResponse:
    door = context.of(request).door
    view = door.live.roster.explain(door.session(request.path_params["key"]).session_key)
    if view is None:
        raise NotFound(f"no session {request.path_params['key']!r}")
    return JSONResponse(view)


@operation("this node: identity, status epoch, counts, version", answers={200: ("Status", "the node")})
async def status(request: Request) -> JSONResponse:
    """This node: who it is, its status epoch, how many sessions in which activity, its version."""
    daemon = context.of(request)
    roster = daemon.live.roster
    everyone = roster.records()
    live = [record for record in everyone if record.liveness != records.ENDED]
    activity = Counter(record.activity for record in live)
    now = daemon.clock()
    return JSONResponse(
        {
            "node": roster.node,
            "node_id": roster.node_id,
            "status_epoch": roster.status_epoch,
            "seq": roster.head,
            "version": __version__,
            "started_at": to_wire(daemon.started_at),
            "uptime_s": round(now - daemon.started_at, 3),
            "counts": {
                "sessions": len(live),
                **{word: activity.get(word, 0) for word in records.ACTIVITIES},
                "ended": len(everyone) - len(live),
            },
            "streams": daemon.live.streams,
            **daemon.facts,
        }
    )
