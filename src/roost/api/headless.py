"""Routes for headless sessions: start one, prompt it, cancel, suspend, resume, stop it (its
permissions are answered as every session's are: :mod:`roost.api.permissions`).

Each reads its body and hands it to one action of :mod:`roost.actions.headless`, which finds
the session and refuses what the runner cannot do with a failure carrying ``code``; the record
in every answer is the roster's, as ``GET /sessions/{key}`` would give it.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.actions import headless
from roost.actions.door import Found
from roost.api import schemas, services
from roost.api.body import read
from roost.roster import Record, to_json

PROMPT_BODY_LIMIT = 6 * 65_536 + 4096
"""A body holding a long prompt with every character escaped, and its options."""


def _answer(record: Record | None, status: int = 200, **extra: Any) -> JSONResponse:
    return JSONResponse({"record": to_json(record) if record else None, **extra}, status_code=status)


def _options(body: schemas.Start) -> headless.Options:
    """A start's options as the action takes them."""
    return headless.Options(body.name, body.policy, body.model, body.effort, dict(body.env))


async def start(request: Request) -> JSONResponse:
    body = await read(request, schemas.Start)
    door = services.of(request).door
    return _answer(await headless.start(door, body.harness, body.cwd, _options(body)), 201)


async def spawn(request: Request) -> JSONResponse:
    body = await read(request, schemas.Spawn)
    door = services.of(request).door
    parent = request.path_params["key"]
    return _answer(await headless.spawn(door, parent, body.harness, body.cwd, _options(body)), 201)


async def prompt(request: Request, found: Found) -> JSONResponse:
    """The prompt is sent (after a resume, when the session was suspended); with ``wait``,
    the answer comes when the session reaches that state or ``timeout_s`` passes, and says
    whether the record's recap is ``stale``: not this prompt's turn's, which had not ended."""
    body = await read(request, schemas.HeadlessPrompt, PROMPT_BODY_LIMIT)
    sent = await headless.prompt(services.of(request).door, found, body.text, body.wait, body.timeout_s)
    if sent.waited is None:
        return _answer(sent.record, input="accepted")
    waited = sent.waited
    wait = {"until": body.wait, "reached": waited.reached, "stale": waited.stale}
    return _answer(waited.record, input="accepted", wait=wait)


async def _bare(request: Request) -> str:
    """The key of an action that takes no body but ``{}``."""
    await read(request, schemas.NoBody)
    return str(request.path_params["key"])


async def cancel(request: Request) -> JSONResponse:
    return _answer(await headless.cancel(services.of(request).door, await _bare(request)))


async def suspend(request: Request) -> JSONResponse:
    return _answer(await headless.suspend(services.of(request).door, await _bare(request)))


async def resume(request: Request) -> JSONResponse:
    return _answer(await headless.resume(services.of(request).door, await _bare(request)))


async def stop(request: Request) -> JSONResponse:
    return _answer(await headless.stop(services.of(request).door, await _bare(request)))
