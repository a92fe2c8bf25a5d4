"""A path parameter is one segment as the client wrote it, so a name that holds ``/`` reaches
its route percent-encoded.

A session's display name may hold any character but a control (``rosterd name KEY tests/holder``,
``roost spawn feat/login``), and every name that can be set must be usable wherever a KEY is
taken. The HTTP server hands the app the path already decoded, so ``/sessions/a%2Fb/prompt``
arrives as ``/sessions/a/b/prompt`` and matches no route. :class:`Segments` routes on the
path the client sent instead (``raw_path``): it decodes each segment on its own and, in the
path the routes read, keeps a segment's own ``%`` and ``/`` escaped (``%25``, ``%2F``), which
:class:`Segment`, the converter of every path parameter (``{key:segment}``), turns back. So a
route's parameter is the segment exactly as encoded by the client, decoded once, and a
segment never spills into the next.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from starlette.convertors import Convertor, register_url_convertor
from starlette.types import ASGIApp, Receive, Scope, Send

NAME = "segment"
"""The converter's name in a route's path: ``{key:segment}``."""


def _escaped(segment: str) -> str:
    return segment.replace("%", "%25").replace("/", "%2F")


def _unescaped(segment: str) -> str:
    return segment.replace("%2F", "/").replace("%25", "%")


class Segment(Convertor[str]):
    """One path segment, with the ``/`` and ``%`` it held as the client encoded them."""

    regex = "[^/]+"

    def convert(self, value: str) -> str:
        return _unescaped(value)

    def to_string(self, value: str) -> str:
        return _escaped(value)


register_url_convertor(NAME, Segment())


def path(template: str) -> str:
    """A route's path with every parameter one segment: ``/sessions/{key}`` is
    ``/sessions/{key:segment}``. Every route with a parameter is declared through it, since
    :class:`Segments` hands them all the path with each segment's ``%`` escaped."""
    return re.sub(r"\{(\w+)\}", rf"{{\1:{NAME}}}", template)


def routed(raw_path: bytes) -> str:
    """The path the routes read for ``raw_path`` as sent: each segment decoded on its own (as
    the server decodes a path, invalid UTF-8 replaced), with its own ``%`` and ``/`` escaped."""
    return "/".join(_escaped(unquote(part)) for part in raw_path.decode("ascii", "replace").split("/"))


class Segments:
    """ASGI middleware: route on the path as sent (see the module's docstring). A path with no
    ``%`` in it is left as the server decoded it: nothing there can hide a ``/``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = scope.get("raw_path")
        if scope["type"] in ("http", "websocket") and raw and b"%" in raw and not scope.get("root_path"):
            scope = {**scope, "path": routed(raw)}
        await self.app(scope, receive, send)
