"""The table of refusals for sessions of other nodes: each code is answered with its status,
and rosterd exits with its code, through the real app and the CLI's reading of a refusal."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
from starlette.requests import Request

from roost.actions.remote import API, Act, Through
from roost.actions.sessions import Door
from roost.base.errors import RoostError
from roost.faces.api import Context, auth, create_app, proxy
from roost.faces.api.app import VERBS
from roost.faces.cli.daemonclient import Refused
from tests.actions.swarmdoor import DESK, GONE, LAPTOP, swarm_door
from tests.contracts.tables import table
from tests.roster.helpers import NODE, Clock, key

DOCUMENTED = {row["code"].strip("`"): row for row in table("Sessions of other nodes")}


def asked(door: Door, method: str, path: str, body: Any = None) -> httpx.Response:
    app = auth.via(create_app(Context(door, "token", started_at=0.0)), auth.UNIX)

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="http://rosterd") as client:
            return await client.request(method, path, json=body)

    return asyncio.run(go())


def owner_answer(door: Door, act: Act) -> tuple[int, dict[str, Any]]:
    async def hung_up() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    app = create_app(Context(door, "token", started_at=0.0))
    request = Request({"type": "http", "method": "POST", "path": "/swarm/act", "headers": []}, hung_up)
    came = Through(LAPTOP, "laptop", "local user", "cli")
    try:
        reply = asyncio.run(proxy.dispatcher(app, VERBS)(act, came, request))
    except RoostError as error:
        return error.status, {"error": error.message, **error.extra}
    return reply.status, json.loads(reply.body)


def test_each_code_is_answered_with_its_status_and_exits_with_its_code() -> None:
    door = swarm_door(Clock(time.time()))
    seen = {
        "peer_unreachable": asked(door, "POST", f"/sessions/{LAPTOP}:1:1/prompt", {"text": "x"}),
        "no_such_node": asked(door, "POST", "/swarm/nowhere/sessions/x/prompt", {"text": "x"}),
        "owned_elsewhere": asked(door, "POST", f"/swarm/{NODE}/sessions/builder/name", {"name": "x"}),
    }
    answers = {code: (answer.status_code, answer.json()) for code, answer in seen.items()}
    answers["not_owner"] = owner_answer(door, Act(f"{LAPTOP}:1:1", API, "read", "", "x", "api"))
    answers["no_such_verb"] = owner_answer(door, Act(key(), API, "invite", "{}", "x", "api"))
    assert set(answers) == set(DOCUMENTED)
    for code, (status, doc) in answers.items():
        row = DOCUMENTED[code]
        assert (doc["code"], status) == (code, int(row["HTTP"])), code
        assert Refused(status, json.dumps(doc).encode()).exit_code == int(row["exit"]), code


def test_a_node_name_two_members_share_is_refused_with_both_never_guessed() -> None:
    door = swarm_door(Clock(time.time()))
    door.forwarder.names[GONE] = "desk"  # type: ignore[union-attr]
    answer = asked(door, "POST", "/swarm/desk/sessions/x/prompt", {"text": "x"})
    assert answer.status_code == 409
    assert answer.json()["candidates"] == [DESK, GONE]
    assert answer.json()["nodes"] == [{"node_id": DESK, "node": "desk"}, {"node_id": GONE, "node": "desk"}]
    assert Refused(409, answer.content).exit_code == 1
    assert door.forwarder.sent == []  # type: ignore[union-attr]
