"""Routes for headless sessions: start one, prompt it, cancel, suspend, resume, stop it (its
permissions are answered as every session's are: :mod:`roost.faces.api.permissions`).

Each reads its body and hands it to one action of :mod:`roost.actions.headless`, which finds
the session and refuses what the runner cannot do with a failure carrying ``code``; the record
in every answer is the roster's, as ``GET /sessions/{key}`` would give it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.actions import handoff as handing
from roost.actions import headless
from roost.actions.sessions import Found
from roost.faces.api import context, schemas
from roost.faces.api.body import read
from roost.faces.api.operations import KEY, H, operation
from roost.truth.roster import Record, to_json


def _answer(record: Record | None, status: int = 200, **extra: Any) -> JSONResponse:
    return JSONResponse({"record": to_json(record) if record else None, **extra}, status_code=status)


def _options(body: schemas.Start) -> headless.Options:
    """A start's options as the action takes them."""
    return headless.Options(body.name, body.policy, body.model, body.effort, dict(body.env))


@operation(
    "start a headless session over the harness's ACP adapter",
    answers={201: ("HeadlessAnswer", "started: its record")},
    fails=(400, 404, 409, 413, 502),
    body=schemas.Start,
)
async def start(request: Request) -> JSONResponse:
    body = await read(request, schemas.Start)
    door = context.of(request).door
    return _answer(await headless.start(door, body.harness, body.cwd, _options(body)), 201)


@operation(
    "start a child of a headless session (the parent's policy unless one is named)",
    answers={201: ("HeadlessAnswer", "started: the child's record")},
    fails=(400, 404, 409, 413, 502),
    body=schemas.Spawn,
    params=(KEY,),
)
async def spawn(request: Request) -> JSONResponse:
    body = await read(request, schemas.Spawn)
    door = context.of(request).door
    parent = request.path_params["key"]
    return _answer(await headless.spawn(door, parent, body.harness, body.cwd, _options(body)), 201)


async def prompt(request: Request, found: Found) -> JSONResponse:
    """The prompt is sent (after a resume, when the session was suspended); with ``wait``,
    the answer comes when the session reaches that state or ``timeout_s`` passes, and says
    whether the record's recap is ``stale``: not this prompt's turn's, which had not ended."""
    other = (schemas.Prompt, "a headless session's prompt is its text and what to wait for, with no pins")
    body = await read(request, schemas.HeadlessPrompt, other=other)
    sent = await headless.prompt(context.of(request).door, found, body.text, body.wait, body.timeout_s)
    if sent.waited is None:
        return _answer(sent.record, input="accepted")
    waited = sent.waited
    wait = {"until": body.wait, "reached": waited.reached, "stale": waited.stale}
    return _answer(waited.record, input="accepted", wait=wait)


def _bare_action(summary: str) -> Callable[[H], H]:
    """The declaration of an action that takes nothing but the session and answers its record."""
    return operation(
        summary,
        answers={200: ("HeadlessAnswer", "done: the record")},
        fails=(400, 404, 409, 413, 502),
        body=schemas.NoBody,
        params=(KEY,),
    )


async def _bare(request: Request) -> str:
    """The key of an action that takes no body but ``{}``."""
    await read(request, schemas.NoBody)
    return str(request.path_params["key"])


@_bare_action("cancel a headless session's running turn")
async def cancel(request: Request) -> JSONResponse:
    return _answer(await headless.cancel(context.of(request).door, await _bare(request)))


@_bare_action("stop a headless session's holder; the record stays, suspended")
async def suspend(request: Request) -> JSONResponse:
    return _answer(await headless.suspend(context.of(request).door, await _bare(request)))


@_bare_action("start a suspended headless session again (session/load)")
async def resume(request: Request) -> JSONResponse:
    return _answer(await headless.resume(context.of(request).door, await _bare(request)))


@_bare_action("end a headless session and every process under it")
async def stop(request: Request) -> JSONResponse:
    return _answer(await headless.stop(context.of(request).door, await _bare(request)))


@operation(
    "hand a headless session to another node: suspended here, resumed there under a new key",
    answers={201: ("HandedOff", "taken: the record here, ended handed_off, and the one there")},
    fails=(400, 404, 409, 413, 502),
    body=schemas.Handoff,
    params=(KEY,),
)
async def handoff(request: Request) -> JSONResponse:
    body = await read(request, schemas.Handoff)
    door = context.of(request).door
    done = await handing.handoff(door, str(request.path_params["key"]), body.to)
    return JSONResponse({"record": to_json(done.record), "there": done.there}, status_code=201)
