"""``POST /sessions/{key}/wait``: block until a pinned occupant's outcome (the waiting itself is
:mod:`roost.actions.waits`); and what every API wait shares: the stream limit it counts against,
the outcome's JSON, and letting go of a wait whose caller hung up."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.actions.waits import OUTCOMES, Ending, Pin, Until, Wait
from roost.api import rows, schemas, services
from roost.api.body import read
from roost.api.errors import TooMany
from roost.api.operations import KEY, operation
from roost.roster import Roster

__all__ = ["OUTCOMES", "ClientGone", "Ending", "Pin", "Until", "Wait", "ending_json", "open_wait", "wait"]

T = TypeVar("T")


class ClientGone(Exception):
    """The caller hung up; nobody is left to tell the outcome to."""


def open_wait(request: Request, pane: str, pin: Pin, until: Until) -> Wait:
    """A subscribed waiter, counted with the SSE streams against the same limit."""
    daemon = services.of(request)
    if daemon.live.streams >= daemon.max_streams:
        raise TooMany(f"{daemon.max_streams} streams are open already; close one first")
    return Wait(daemon.live, daemon.tmux, pane, pin, until)


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
    daemon = services.of(request)
    body = await read(request, schemas.Wait, context={"now": daemon.clock()})
    pin = Pin(body.status_epoch, body.occupant_id)
    until = Until(frozenset(body.until), body.after_revision)
    deadline = body.deadline_ms / 1000
    socket = daemon.tmux.socket if daemon.tmux is not None else None
    pane = rows.session_pane(daemon.live.roster, socket, request.path_params["key"])
    waiter = open_wait(request, pane, pin, until)
    try:
        ending = await unless_disconnected(request, waiter.outcome(deadline, daemon.clock))
    except ClientGone:
        return JSONResponse({"outcome": None, "row": None})
    finally:
        waiter.close()
    return JSONResponse({"session_id": pane, **ending_json(ending, daemon.live.roster, socket)})
