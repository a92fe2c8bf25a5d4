"""``POST /swarm/handoff``: a session another node hands to this one.

The route sits behind the signed door, so its sender is a current member; the bundle it sends
(:mod:`roost.headless.runner.portable`) is that member's word, and the runner checks every field, the
folder, and each file's path against this node's own manifest before anything is written or
started (:meth:`roost.headless.runner.runner.Runner.take_in`). Its answer is the new session's record
(201), or the refusal that the origin passes on to whoever asked (a missing folder is
``no_cwd``, 409; a different transcript already here ``transcript_differs``, 409). The origin
ends its session ``handed_off`` only on that 201; this node never calls back. This node keeps
the session only once that answer is out: an origin that hung up first (it gave up waiting)
kept its copy, so this one is dropped at once (and at the next start, when this daemon died
between opening it and answering).

This is the one peer route whose body may pass the listener's 1 MiB: :data:`MAX_BODY` covers a
bundle at :data:`roost.headless.runner.portable.MAX_FILES` of transcript, base64 and all.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from roost.base.errors import UsageError
from roost.headless.runner.portable import MAX_FILES
from roost.remote.mesh import listener
from roost.remote.mesh.acts import HANDOFF
from roost.remote.swarm import canonical
from roost.truth.roster import to_json

if TYPE_CHECKING:
    from roost.headless.runner.runner import Runner

log = logging.getLogger("rosterd.swarm")

MAX_BODY = MAX_FILES * 4 // 3 + (1 << 20)
"""Bytes of a handoff's body: its files in base64, and a MiB for the rest."""


class Arrivals:
    """The target's side of a handoff: this node's runner takes the session in."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self.limits = {HANDOFF: MAX_BODY}
        """The listener's body limit for this route's path."""

    def route(self) -> Route:
        return listener.route(HANDOFF, self.take)

    async def take(self, request: Request) -> JSONResponse:
        sender = listener.peer(request)
        try:
            document = canonical.parse(await request.body(), limit=MAX_BODY)
        except ValueError:
            raise UsageError("the body is not JSON roost sends", field="handoff") from None
        record = await self.runner.take_in(document, sender.name)
        key = record.session_key
        if await request.is_disconnected():  # the origin gave up waiting: it keeps its copy
            await self.runner.drop(key)
            return JSONResponse({"error": "the origin hung up before the answer"}, status_code=409)
        log.info("took in a session handed off by %s: %s", sender.name, key)
        kept = BackgroundTask(self.runner.confirmed, key)  # once the answer is out
        return JSONResponse({"record": to_json(record)}, status_code=201, background=kept)
