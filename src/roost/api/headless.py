"""Routes for headless sessions: start one, prompt it, cancel, suspend, resume, stop it (its
permissions are answered as every session's are: :mod:`roost.api.permissions`).

Each hands the request to the runner (:mod:`roost.runner.runner`), which refuses what it
cannot do with a failure carrying ``code``; the record in every answer is the roster's, as
``GET /sessions/{key}`` would give it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.actions.lookup import resolve
from roost.api import schemas, services
from roost.api.body import read
from roost.api.errors import NotFound
from roost.api.operations import KEY, H, operation
from roost.roster import Record, to_json
from roost.runner.runner import Runner

PROMPT_BODY_LIMIT = 6 * 65_536 + 4096
"""A body holding a long prompt with every character escaped, and its options."""


def _runner(request: Request) -> Runner:
    runner = services.of(request).runner
    if runner is None:
        raise NotFound("this daemon runs no headless sessions")
    return runner


def headless_key(request: Request) -> str | None:
    """The headless session the path's ``{key}`` names, or None when it names another."""
    daemon = services.of(request)
    if daemon.runner is None:
        return None
    try:
        key = resolve(daemon.live.roster, request.path_params["key"])
    except Exception:
        return None
    return key if daemon.runner.owns(key) else None


def _key(request: Request) -> str:
    key = headless_key(request)
    if key is None:
        resolve(services.of(request).live.roster, request.path_params["key"])  # NotFound, or ambiguous
        raise NotFound(f"{request.path_params['key']} is not a headless session", code="not_headless")
    return key


def _answer(record: Record | None, status: int = 200, **extra: Any) -> JSONResponse:
    return JSONResponse({"record": to_json(record) if record else None, **extra}, status_code=status)


def _options(body: schemas.Start) -> dict[str, Any]:
    """A start's options as the runner takes them."""
    return {
        "name": body.name,
        "policy": body.policy,
        "model": body.model,
        "effort": body.effort,
        "env": dict(body.env),
    }


@operation(
    "start a headless session over the harness's ACP adapter",
    answers={201: ("HeadlessAnswer", "started: its record")},
    fails=(400, 404, 409, 413, 502),
    body=schemas.Start,
)
async def start(request: Request) -> JSONResponse:
    body = await read(request, schemas.Start)
    return _answer(await _runner(request).start(body.harness, body.cwd, **_options(body)), 201)


@operation(
    "start a child of a headless session (the parent's policy unless one is named)",
    answers={201: ("HeadlessAnswer", "started: the child's record")},
    fails=(400, 404, 409, 413, 502),
    body=schemas.Spawn,
    params=(KEY,),
)
async def spawn(request: Request) -> JSONResponse:
    body = await read(request, schemas.Spawn)
    key = _key(request)
    return _answer(await _runner(request).spawn(key, body.harness, body.cwd, **_options(body)), 201)


async def prompt(request: Request) -> JSONResponse:
    """The prompt is sent (after a resume, when the session was suspended); with ``wait``,
    the answer comes when the session reaches that state or ``timeout_s`` passes, and says
    whether the record's recap is ``stale``: not this prompt's turn's, which had not ended."""
    other = (schemas.Prompt, "a headless session's prompt is its text and what to wait for, with no pins")
    body = await read(request, schemas.HeadlessPrompt, PROMPT_BODY_LIMIT, other=other)
    key = _key(request)
    runner = _runner(request)
    record, turn = await runner.prompt(key, body.text)
    extra: dict[str, Any] = {"input": "accepted"}
    if body.wait is not None:
        waited = await runner.wait(key, body.wait, body.timeout_s, turn)
        record = waited.record
        extra["wait"] = {"until": body.wait, "reached": waited.reached, "stale": waited.stale}
    return _answer(record, **extra)


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
    return _key(request)


@_bare_action("cancel a headless session's running turn")
async def cancel(request: Request) -> JSONResponse:
    return _answer(await _runner(request).cancel(await _bare(request)))


@_bare_action("stop a headless session's holder; the record stays, suspended")
async def suspend(request: Request) -> JSONResponse:
    return _answer(await _runner(request).suspend(await _bare(request)))


@_bare_action("start a suspended headless session again (session/load)")
async def resume(request: Request) -> JSONResponse:
    return _answer(await _runner(request).resume(await _bare(request)))


@_bare_action("end a headless session and every process under it")
async def stop(request: Request) -> JSONResponse:
    key = await _bare(request)
    await _runner(request).stop(key)
    return _answer(services.of(request).live.roster.record(key))
