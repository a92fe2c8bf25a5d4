"""The session paths for another node's session, in process: what is forwarded (the verb, the
body as sent, who asked), what comes back (the owner's status and body, byte for byte), and
what the owner's side refuses. The swarm is a fake forwarder (:mod:`tests.actions.swarmdoor`);
the wire is :mod:`tests.mesh.test_nodes_acts`'s."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest
from starlette.requests import Request

from roost.actions.remote import API, Act, Reply, Through
from roost.actions.sessions import Door
from roost.base.errors import RoostError
from roost.faces.api import Context, auth, create_app, proxy
from roost.faces.api.app import VERBS
from tests.actions.swarmdoor import HERE, LAPTOP, Members, swarm_door
from tests.roster.helpers import NODE, Clock, key

OWNER_SAYS = Reply(409, b'{"error":"the pane is busy","code":"busy","session_id":"%3"}')
REMOTE = f"{LAPTOP}:10:5"


def door(answer: Reply | None = OWNER_SAYS) -> Door:
    return swarm_door(Clock(time.time()), answer)


def client(found: Door, peer: str = auth.UNIX) -> httpx.AsyncClient:
    app = create_app(Context(found, "token", started_at=0.0))
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=auth.via(app, peer)), base_url="http://rosterd"
    )  # type: ignore[arg-type]


def sent(found: Door) -> list[tuple[str, Act]]:
    assert isinstance(found.forwarder, Members)
    return found.forwarder.sent


def request(found: Door, method: str, path: str, **kwargs: Any) -> httpx.Response:
    async def go() -> httpx.Response:
        async with client(found) as api:
            return await api.request(method, path, **kwargs)

    return asyncio.run(go())


def test_a_prompt_to_another_nodes_session_is_one_act_and_the_owners_answer_unchanged() -> None:
    found = door()
    body = b'{"text": "hello", "wait": "idle", "timeout_s": 30}'
    answer = request(
        found, "POST", f"/sessions/{REMOTE}/prompt", content=body, headers={"user-agent": "rosterd-cli"}
    )
    assert (answer.status_code, answer.content) == (OWNER_SAYS.status, OWNER_SAYS.body)
    assert sent(found) == [(LAPTOP, Act(REMOTE, API, "prompt", body.decode(), "local user", "cli", 30.0))]


@pytest.mark.parametrize(
    ("method", "path", "verb"),
    [
        ("GET", "/sessions/builder", "read"),
        ("GET", "/sessions/builder/explain", "explain"),
        ("POST", "/sessions/builder/permission", "permission"),
        ("POST", "/sessions/builder/input", "input"),
        ("POST", "/sessions/builder/name", "name"),
        ("POST", "/sessions/builder/cancel", "cancel"),
        ("POST", "/sessions/builder/stop", "stop"),
        ("POST", "/sessions/builder/suspend", "suspend"),
        ("POST", "/sessions/builder/resume", "resume"),
        ("POST", "/sessions/builder/spawn", "spawn"),
        ("POST", "/sessions/builder/fork", "fork"),
        ("POST", "/sessions/builder/wait", "wait"),
    ],
)
def test_every_session_verb_goes_to_the_owner_by_the_exact_key(method: str, path: str, verb: str) -> None:
    found = door(Reply(200, b'{"ok": true}'))
    answer = request(found, method, path, content=b"{}" if method == "POST" else b"")
    assert (answer.status_code, answer.json()) == (200, {"ok": True})
    [(node, act)] = sent(found)
    assert (node, act.session, act.verb, act.by, act.via) == (LAPTOP, REMOTE, verb, "local user", "api")


def test_under_swarm_node_the_key_goes_to_that_node_as_typed_and_a_start_names_none() -> None:
    found = door(Reply(201, b'{"record": null}'))
    assert (
        request(found, "POST", "/swarm/laptop/sessions/worker/prompt", json={"text": "x"}).status_code == 201
    )
    assert (
        request(found, "POST", "/swarm/bbbbbbbbbbbbbbbb/sessions", json={"harness": "fake"}).status_code
        == 201
    )
    assert [(node, act.session, act.verb) for node, act in sent(found)] == [
        (LAPTOP, "worker", "prompt"),
        ("bbbbbbbbbbbbbbbb", None, "start"),
    ]


def test_under_this_nodes_own_name_or_id_the_route_runs_here() -> None:
    found = door()
    for node in (NODE, found.live.roster.node_id):
        answer = request(found, "GET", f"/swarm/{node}/sessions/{key(HERE)}")
        assert (answer.status_code, answer.json()["session_key"]) == (200, key(HERE))
    elsewhere = request(found, "POST", f"/swarm/{NODE}/sessions/builder/name", json={"name": "x"})
    assert (elsewhere.status_code, elsewhere.json()["code"]) == (409, "owned_elsewhere")
    assert sent(found) == []  # this node's path names this node's sessions only


def test_refusals_before_anything_is_sent() -> None:
    found = door()
    nowhere = request(found, "POST", "/swarm/nowhere/sessions/x/prompt", json={"text": "x"})
    assert (nowhere.status_code, nowhere.json()["code"]) == (404, "no_such_node")
    for method, path in (
        ("POST", "/sessions/twin/prompt"),
        ("GET", "/sessions/twin"),
        ("GET", "/sessions/twin/explain"),
    ):
        ambiguous = request(found, method, path, content=b"{}" if method == "POST" else b"")
        assert ambiguous.status_code == 409 and len(ambiguous.json()["nodes"]) == 2, path
    large = request(found, "POST", f"/sessions/{REMOTE}/prompt", content=b'"' + b"x" * proxy.LIMIT + b'"')
    assert (large.status_code, large.json()["limit"]) == (413, proxy.LIMIT)
    binary = request(found, "POST", f"/sessions/{REMOTE}/prompt", content=b"\xff\xfe")
    assert binary.status_code == 400
    assert sent(found) == []


def test_an_owner_that_does_not_answer_is_a_502_peer_unreachable() -> None:
    found = door(None)
    answer = request(found, "POST", f"/sessions/{REMOTE}/prompt", json={"text": "x"})
    assert (answer.status_code, answer.json()["code"]) == (502, "peer_unreachable")
    assert len(sent(found)) == 1


def dispatched(found: Door, act: Act) -> Reply:
    """``act`` run on this node as the swarm listener's route runs one: through the app as the
    daemon makes it, before any listener marks it (the act is marked as the swarm's)."""
    app = create_app(Context(found, "token", started_at=0.0))

    async def hung_up() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    scope = {"type": "http", "method": "POST", "path": "/swarm/act", "headers": [], "server": None}
    return asyncio.run(
        proxy.dispatcher(app, VERBS)(
            act, Through(LAPTOP, "laptop", "local user", "cli"), Request(scope, hung_up)
        )
    )


def test_the_owner_runs_a_forwarded_act_through_its_own_route() -> None:
    found = door()
    read = dispatched(found, Act(key(HERE), API, "read", "", "local user", "cli"))
    assert read.status == 200 and key(HERE).encode() in read.body
    named = dispatched(found, Act("here", API, "name", '{"name": "renamed"}', "local user", "cli"))
    assert named.status == 200 and found.live.roster.record(key(HERE)).name == "renamed"  # type: ignore[union-attr]
    refused = dispatched(found, Act(key(HERE), API, "prompt", '{"text": 5}', "local user", "cli"))
    assert refused.status == 400
    assert sent(found) == []


def test_the_owner_never_forwards_an_act_again() -> None:
    found = door()
    other = dispatched(found, Act(REMOTE, API, "prompt", '{"text": "x"}', "local user", "cli"))
    assert (other.status, b'"not_owner"' in other.body) == (409, True)
    by_name = dispatched(found, Act("builder", API, "read", "", "local user", "cli"))
    assert (by_name.status, b'"owned_elsewhere"' in by_name.body) == (409, True)  # refused, not sent on
    assert sent(found) == []


@pytest.mark.parametrize(
    ("act", "status"),
    [
        (Act(key(HERE), API, "invite", "{}", "x", "api"), 404),
        (Act(None, API, "prompt", "{}", "x", "api"), 400),
        (Act(key(HERE), API, "start", "{}", "x", "api"), 400),
    ],
)
def test_the_owner_refuses_a_verb_it_does_not_serve_or_a_start_that_names_a_session(
    act: Act, status: int
) -> None:
    with pytest.raises(RoostError) as refused:
        dispatched(door(), act)
    assert refused.value.status == status
