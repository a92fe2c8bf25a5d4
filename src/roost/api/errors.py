"""Every error the API returns: one exception per status, one JSON shape, one place.

A route raises :class:`ApiError` (or a subclass) and never builds an error response itself;
Starlette's own errors (an unknown route, a wrong method) get the same ``{"error": …}`` shape.
"""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response


class ApiError(Exception):
    """A failure the caller can act on; ``extra`` adds fields beside ``error`` (candidates…)."""

    status = 400

    def __init__(self, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra


class BadRequest(ApiError):
    status = 400


class Unauthorized(ApiError):
    status = 401


class NotFound(ApiError):
    status = 404


class Conflict(ApiError):
    """The request is well formed but the roster refuses it (an ended session, a stale claim,
    an ambiguous name)."""

    status = 409


class TooLarge(ApiError):
    status = 413


class TooMany(ApiError):
    status = 429


class Unavailable(ApiError):
    """Something the daemon relies on (tmux) failed it, through no fault of the request."""

    status = 503


def response(status: int, message: str, **extra: Any) -> JSONResponse:
    headers = {"WWW-Authenticate": 'Bearer realm="rosterd"'} if status == 401 else None
    return JSONResponse({"error": message, **extra}, status_code=status, headers=headers)


async def _api_error(_request: Request, error: Exception) -> Response:
    assert isinstance(error, ApiError)
    return response(error.status, error.message, **error.extra)


async def _http_error(_request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    message = {404: "no such route", 405: "method not allowed"}.get(error.status_code, str(error.detail))
    return JSONResponse({"error": message}, status_code=error.status_code, headers=error.headers)


async def _internal(_request: Request, _error: Exception) -> Response:
    return JSONResponse({"error": "internal error; see the daemon's log"}, status_code=500)


HANDLERS = {ApiError: _api_error, HTTPException: _http_error, Exception: _internal}
