"""The webhook routes: register one (``POST /hooks``), list them (``GET /hooks``), delete one
(``DELETE /hooks/{id}``). What a webhook receives, and which URLs it may have, is
:mod:`roost.services.notify.webhooks`' and :mod:`roost.services.notify.destinations`' to
say; a token goes in and never comes out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from roost.faces.api import context, schemas
from roost.faces.api.body import read
from roost.faces.api.errors import Unavailable
from roost.faces.api.operations import operation, parameter

if TYPE_CHECKING:
    from roost.services.notify.webhooks import Webhooks


def _webhooks(request: Request) -> Webhooks:
    webhooks = context.of(request).webhooks
    if webhooks is None:
        raise Unavailable("webhooks are not running in this daemon")
    return webhooks


@operation(
    "register a webhook: each change of the kinds named (none: every kind) is POSTed to a "
    "loopback or tailnet URL as {event, data}, the token as its bearer",
    answers={201: ("Webhook", "registered (the token is never shown again)")},
    fails=(400, 413, 429, 503),
    body=schemas.Hook,
)
async def register(request: Request) -> JSONResponse:
    webhooks = _webhooks(request)
    body = await read(request, schemas.Hook)
    hook = await webhooks.add(body.url, body.events or (), body.token)
    return JSONResponse(hook, status_code=201)


@operation(
    "every registered webhook, without its token", answers={200: ("Webhooks", "the webhooks")}, fails=(503,)
)
async def listing(request: Request) -> JSONResponse:
    return JSONResponse({"hooks": _webhooks(request).listing()})


@operation(
    "delete a webhook; what it had queued is dropped",
    answers={204: (None, "deleted")},
    fails=(404, 503),
    params=(parameter("path", "id", {"type": "string"}),),
)
async def delete(request: Request) -> Response:
    await _webhooks(request).remove(request.path_params["id"])
    return Response(status_code=204)
