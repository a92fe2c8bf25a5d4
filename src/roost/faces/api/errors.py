"""How the API answers a failure: the status of its class in :mod:`roost.base.errors`, as
``{"error": message, …extra}``, from one place.

A route raises a failure (its own, or one a lower layer raised: a ``TargetGone`` from the
tmux layer, a ``ManifestError``) and never builds an error response itself; Starlette's own
errors (an unknown route, a wrong method) get the same shape. Only an exception that is no
known failure answers 500. The names below are the API's words for failures of the one table.
"""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Match, Route

from roost.base.errors import Conflict, Forbidden, RoostError, TooLarge, TooMany, Unavailable
from roost.base.errors import TargetGone as NotFound
from roost.base.errors import UsageError as BadRequest

__all__ = [
    "HANDLERS",
    "BadRequest",
    "Conflict",
    "Forbidden",
    "NotFound",
    "TooLarge",
    "TooMany",
    "Unavailable",
    "response",
]


def response(status: int, message: str, **extra: Any) -> JSONResponse:
    headers = {"WWW-Authenticate": 'Bearer realm="rosterd"'} if status == 401 else None
    return JSONResponse({"error": message, **extra}, status_code=status, headers=headers)


def answer(error: RoostError) -> JSONResponse:
    """The answer to a failure: its own status from the one table, its message and fields."""
    return response(error.status, error.message, **error.extra)


async def _failure(_request: Request, error: Exception) -> Response:
    assert isinstance(error, RoostError)
    return answer(error)


async def _http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    message = {404: "no such route", 405: "method not allowed"}.get(error.status_code, str(error.detail))
    headers = dict(error.headers or {})
    if error.status_code == 405:
        headers["Allow"] = ", ".join(_allowed(request))
    return JSONResponse({"error": message}, status_code=error.status_code, headers=headers)


def _allowed(request: Request) -> list[str]:
    """Every method the request's path takes. Starlette's 405 names only the first route that
    matched the path, but two routes may share one (``GET`` and ``POST /hooks``)."""
    methods: set[str] = set()
    for route in request.app.routes:
        if isinstance(route, Route) and route.matches(request.scope)[0] is not Match.NONE:
            methods |= route.methods or set()
    return sorted(methods)


async def _internal(_request: Request, _error: Exception) -> Response:
    return JSONResponse({"error": "internal error; see the daemon's log"}, status_code=500)


HANDLERS = {RoostError: _failure, HTTPException: _http_error, Exception: _internal}
