"""A name that can be set is usable everywhere: a display name holding ``/`` or ``%`` reaches
every session route percent-encoded, over the real daemon's socket and through ``rosterd``, and
a segment never spills into the next (``tests/mesh/test_nodes_names.py`` does the same between
nodes)."""

from __future__ import annotations

import json
import subprocess
from urllib.parse import quote

import pytest
from starlette.routing import BaseRoute, Route, WebSocketRoute

from roost.faces.api import segments
from roost.faces.api.app import ROUTES
from roost.faces.api.web import ROUTES as WEB_ROUTES
from tests.api.helpers import about
from tests.cli.rosterd.helpers import rosterd
from tests.daemon.fixture import Daemon

NAMES = ["tests/holder", "feat/a/b", "100%", "a%2Fb", "x%25y", "%3", "/lead", "both/%2F/"]
"""Names a person may give (a branch, a ratio, the escapes themselves), each one segment."""


@pytest.mark.parametrize(
    ("raw", "routed"),
    [
        (b"/sessions/tests%2Fholder/name", "/sessions/tests%2Fholder/name"),
        (b"/sessions/tests%2fholder", "/sessions/tests%2Fholder"),
        (b"/sessions/100%25", "/sessions/100%25"),
        (b"/sessions/a%252Fb/explain", "/sessions/a%252Fb/explain"),
        (b"/sessions/my%20box", "/sessions/my box"),
        (b"/terminals/%253/tail", "/terminals/%253/tail"),
        (b"/sessions/caf%C3%A9", "/sessions/caf\u00e9"),
    ],
)
def test_each_segment_is_decoded_on_its_own(raw: bytes, routed: str) -> None:
    assert segments.routed(raw) == routed


def test_every_parameter_of_every_route_is_one_segment() -> None:
    """A route with a parameter not declared through ``segments.path`` would get a name's ``%``
    still escaped: every one is, on the API's table and the web's."""
    routes: list[BaseRoute] = [*ROUTES, *WEB_ROUTES]
    for route in routes:
        if isinstance(route, Route | WebSocketRoute):
            convertors = route.param_convertors.values()
            assert all(isinstance(found, segments.Segment) for found in convertors), route.path


def test_a_name_with_a_slash_or_a_percent_is_usable_on_every_route(running: Daemon) -> None:
    with running.unix() as api, subprocess.Popen(["sleep", "600"]) as proc:
        try:
            first = api.post("/claim", json=about(proc, activity="working", name="first"))
            key = first.json()["session_key"]
            for name in NAMES:
                named = api.post(f"/sessions/{key}/name", json={"name": name})
                assert named.status_code == 200 and named.json()["accepted"], (name, named.text)
                path = f"/sessions/{quote(name, safe='')}"
                read = api.get(path)
                assert (read.status_code, read.json().get("session_key")) == (200, key), (name, read.text)
                explained = api.get(f"{path}/explain")
                assert explained.status_code == 200 and explained.json()["session_key"] == key, name
                again = api.post(f"{path}/name", json={"name": name})
                assert again.status_code == 200, (name, again.text)
            # a segment never spills: the last name's first part is no session, nor a route
            assert api.get("/sessions/both").status_code == 404
            assert api.get("/sessions/tests%2Fholder%2Fname").json()["error"].startswith("no session")
        finally:
            proc.kill()


def test_rosterd_reads_and_names_a_session_by_a_name_with_a_slash(running: Daemon) -> None:
    with running.unix() as api, subprocess.Popen(["sleep", "600"]) as proc:
        try:
            key = api.post("/claim", json=about(proc, activity="working")).json()["session_key"]
            set_by_cli = rosterd(running, "name", key, "tests/holder")
            assert set_by_cli.returncode == 0, set_by_cli.stderr
            for args in (("read", "tests/holder", "--json"), ("explain", "tests/holder", "--json")):
                done = rosterd(running, *args)
                assert done.returncode == 0, (args, done.stderr)
                assert json.loads(done.stdout)["session_key"] == key
            renamed = rosterd(running, "name", "tests/holder", "100%/done")
            assert renamed.returncode == 0, renamed.stderr
            assert rosterd(running, "read", "100%/done").returncode == 0
            gone = rosterd(running, "read", "tests/holder")
            assert (gone.returncode, gone.stderr) == (1, b"rosterd read: no session 'tests/holder'\n")
        finally:
            proc.kill()


def test_a_pane_id_still_travels_quoted(running: Daemon) -> None:
    """``%3`` is sent as ``%253``: its ``%`` is the segment's own, never an escape."""
    with running.unix() as api:
        answer = api.get("/terminals/%25999/tail")
    assert answer.status_code in (404, 503), answer.text
    assert "%999" in answer.json()["error"] or "tmux" in answer.json()["error"]


def test_the_openapi_document_names_parameters_as_a_client_writes_them(running: Daemon) -> None:
    with running.unix() as api:
        paths = api.get("/openapi.json").json()["paths"]
    assert "/sessions/{key}" in paths and "/swarm/{node}/sessions/{key}/prompt" in paths
    assert not [path for path in paths if ":segment" in path]
