"""The document is read off the routes: a route that declares nothing, or not each parameter of
its path, stops it; and the daemon's start never loads what builds it."""

from __future__ import annotations

import subprocess
import sys

import pytest
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from roost.faces.api import openapi
from roost.faces.api.app import ROUTES
from roost.faces.api.operations import KEY, operation
from roost.faces.api.web import ROUTES as WEB_ROUTES


async def undeclared(_request: Request) -> Response:
    return Response()


@operation("a route of a test", answers={200: (None, "nothing")}, params=(KEY,))
async def keyed(_request: Request) -> Response:
    return Response()


def test_every_route_declares_itself() -> None:
    described = {(path, method) for path, method, _ in openapi.described((*ROUTES, *WEB_ROUTES))}
    served = {
        (route.path_format, method.lower())
        for route in (*ROUTES, *WEB_ROUTES)
        if isinstance(route, Route)
        for method in route.methods or ()
        if method != "HEAD"
    }
    assert described == served


@pytest.mark.parametrize(
    ("route", "refusal"),
    [
        (Route("/plain", undeclared), "/plain declares no operation"),
        (Route("/things/{id}", keyed), "/things/{id} declares path parameters ['key']"),
    ],
)
def test_a_route_that_does_not_describe_itself_stops_the_document(route: Route, refusal: str) -> None:
    with pytest.raises(LookupError, match=refusal.replace("[", r"\[").replace("]", r"\]")):
        openapi.document((*ROUTES, route))


def test_an_endpoint_of_another_face_is_left_to_its_words() -> None:
    doc = openapi.document((*ROUTES, Route("/mcp", undeclared)), mounts={"/mcp"})
    assert "/mcp" not in doc["paths"] and "/mcp" in doc["info"]["description"]


def test_the_daemon_starts_without_the_generator() -> None:
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, roost.daemon.main; print(*sorted(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert "roost.faces.api.operations" in loaded
    assert not {"roost.faces.api.openapi", "roost.faces.api.answers"} & set(loaded)
