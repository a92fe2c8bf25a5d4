"""The daemon serves its rebuilt roster before it loads its faces (:mod:`roost.faces.api.startup`).

The daemon's own module list is read at the moment it turns from serving the roster to loading
the rest (:mod:`roost.daemon.compose`): the spy below stands in for ``import_module`` in
:mod:`roost.daemon.main`, the one call that loads the rest, writes what ``sys.modules`` held,
then loads it. By then both listeners answer ``GET /snapshot``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from roost.faces.api.startup import Opening
from tests.conftest import Roost
from tests.daemon.fixture import Daemon
from tests.daemon.test_rebuild import badged, in_pane

SPY = """
import json, sys
from roost.daemon import main

seen = sys.argv.pop(1)


def spied(name, load=main.import_module):
    with open(seen, "w") as out:
        json.dump(sorted(sys.modules), out)
    return load(name)


main.import_module = spied
from roost.daemon.__main__ import main as run

sys.exit(run())
"""

HEAVY = (
    "mcp",  # the MCP SDK
    "roost.faces.mcp.server",
    "roost.faces.mcp.tools",
    "roost.faces.api.app",  # every route of the whole app
    "roost.faces.api.openapi",
    "roost.faces.api.schemas",  # the request models
    "roost.remote.mesh.node",  # the swarm
    "cryptography",
    "httpx",
    "roost.services.notify.store",
    "roost.services.ledger.follow",
)
"""What the daemon must not have loaded before its roster is served."""


def test_the_roster_is_served_before_the_faces_load(roost: Roost, daemon: Daemon, tmp_path: Path) -> None:
    pane = badged(roost)
    seen = tmp_path / "modules.json"
    daemon.command = lambda *args: [sys.executable, "-c", SPY, str(seen), *args]  # type: ignore[method-assign]
    daemon.start()
    loaded = set(json.loads(seen.read_text()))
    assert "roost.faces.api.startup" in loaded and "uvicorn" in loaded
    early = sorted(name for name in loaded if name.split(".")[0] in HEAVY or name in HEAVY)
    assert early == [], f"loaded before the roster was served: {early}"
    assert in_pane(daemon, pane) is not None
    with daemon.unix() as client:  # and the whole app is there after
        assert client.get("/openapi.json").status_code == 200


def test_loading_the_daemon_loads_none_of_its_faces() -> None:
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, roost.daemon.main; print(*sorted(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    early = sorted(name for name in loaded if name.split(".")[0] in HEAVY or name in HEAVY)
    assert early == [], early
    assert "pydantic" not in loaded


def _app(name: str) -> Starlette:
    async def answer(request: Request) -> PlainTextResponse:
        return PlainTextResponse(f"{name} {request.url.path}")

    return Starlette(routes=[Route("/snapshot", answer), Route("/status", answer)])


def test_before_it_opens_only_the_snapshot_is_answered_and_the_rest_waits() -> None:
    async def scenario() -> None:
        opening = Opening(_app("early"))
        transport = httpx.ASGITransport(app=opening)
        async with httpx.AsyncClient(transport=transport, base_url="http://rosterd") as client:
            assert (await client.get("/snapshot")).text == "early /snapshot"
            waiting = asyncio.ensure_future(client.get("/status"))
            posted = asyncio.ensure_future(client.post("/snapshot"))
            await asyncio.sleep(0.05)
            assert not waiting.done() and not posted.done()
            opening.open(_app("whole"))
            assert (await waiting).text == "whole /status"
            assert (await posted).status_code == 405  # the whole app's answer, not the early one's
            assert (await client.get("/snapshot")).text == "whole /snapshot"

    asyncio.run(scenario())
