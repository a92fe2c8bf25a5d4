"""``POST /sessions/{key}/wait``: block until a pinned occupant's outcome (the waiting itself is
:mod:`roost.actions.waits`); and what every API wait shares: the outcome's JSON, and letting go
of a wait whose caller hung up."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.actions import waits
from roost.actions.waits import OUTCOMES, Awaiter, Ending, Pin, Until
from roost.faces.api import context, rows, schemas
from roost.faces.api.body import read
from roost.faces.api.operations import KEY, operation
from roost.truth.roster import Roster

__all__ = ["OUTCOMES", "ClientGone", "ending_json", "unless_disconnected", "wait", "watch"]

T = TypeVar("T")


class ClientGone(Exception):
    """The caller hung up; nobody is left to tell the outcome to."""


def ending_json(ending: Ending, roster: Roster, socket: str | None) -> dict[str, Any]:
    """The outcome, with the row of the record it was decided on (none once that ended)."""
    record = ending.record
    return {"outcome": ending.outcome, "row": rows.row(roster, socket, record) if record else None}


async def unless_disconnected(request: Request, work: Awaitable[T]) -> T:
    """Await ``work``, cancelling it if the caller hangs up first: a long wait must not outlive
    the one who asked for it. The body has been read, so the next message is the disconnect."""
    task = asyncio.ensure_future(work)
    hangup = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({task, hangup}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        hangup.cancel()
    if not task.done():
        task.cancel()
        raise ClientGone
    return task.result()


def watch(request: Request) -> Awaiter:
    """How an outcome this request waits for (a wait's, a gate's decision) is awaited: to its
    end, or None once the caller hangs up."""

    async def awaited(work: Awaitable[T]) -> T | None:
        try:
            return await unless_disconnected(request, work)
        except ClientGone:
            return None

    return awaited


async def _disconnected(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        continue


@operation(
    "await one pinned occupant's outcome",
    answers={200: ("WaitOutcome", "the outcome")},
    fails=(400, 404, 409, 413, 429),
    body=schemas.Wait,
    params=(KEY,),
)
async def wait(request: Request) -> JSONResponse:
    """``POST /sessions/{key}/wait``: block until the pinned occupant's outcome."""
    daemon = context.of(request)
    body = await read(request, schemas.Wait, context={"now": daemon.clock()})
    pin = Pin(body.status_epoch, body.occupant_id)
    until = Until(frozenset(body.until), body.after_revision)
    door, key = daemon.door, request.path_params["key"]
    watched = await waits.wait(
        door, key, pin, until, body.deadline_ms / 1000, limit=daemon.max_streams, watch=watch(request)
    )
    if watched.ending is None:
        return JSONResponse({"outcome": None, "row": None})
    shown = ending_json(watched.ending, door.live.roster, door.socket)
    return JSONResponse({"session_id": watched.pane, **shown})
