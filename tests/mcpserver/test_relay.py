"""MCP tools on another node's session, in process: the call the owner is handed (the tool, its
arguments with the session's exact key, who asked), its answer or refusal passed back as the
tool's, ``session.list`` across the swarm, and the owner's side, which runs its own tool under
its own fences on its own sessions only. The swarm is :mod:`tests.actions.swarmdoor`'s fake."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from starlette.requests import Request

from roost.actions.remote import MCP, Act, Reply, Through
from roost.faces.mcp import tools
from roost.faces.mcp.caller import Caller
from roost.faces.mcp.tools import TOOLS, Context, call
from tests.actions.swarmdoor import HERE, LAPTOP, Members, swarm_door
from tests.roster.helpers import Clock, key

REMOTE = f"{LAPTOP}:10:5"


def context(answer: Reply | None = None, allow_always: bool = False) -> Context:
    return Context(swarm_door(Clock(time.time()), answer), allow_always=allow_always)


def called(
    found: Context, tool: str, caller: Caller | None = None, **arguments: Any
) -> tuple[dict[str, Any], bool]:
    return asyncio.run(call(found, TOOLS[tool], caller or Caller(), arguments))


def sent(found: Context) -> list[tuple[str, Act]]:
    assert isinstance(found.door.forwarder, Members)
    return found.door.forwarder.sent


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("session.find", {}),
        ("session.read_state", {}),
        ("session.send", {"prompt": "hi", "wait_until": "idle"}),
        ("session.cancel", {}),
        ("session.allow", {"always": True}),
        ("session.deny", {"reason": "no"}),
    ],
)
def test_a_tool_on_another_nodes_session_is_the_owners_call_answered_as_it_answers(
    tool: str, arguments: dict[str, Any]
) -> None:
    found = context(Reply(200, b'{"record": {"session_key": "x"}}'))
    caller = Caller(session=key(HERE))
    assert called(found, tool, caller, name="builder", **arguments) == (
        {"record": {"session_key": "x"}},
        False,
    )
    [(node, act)] = sent(found)
    assert (node, act.session, act.face, act.verb, act.by, act.via) == (
        LAPTOP,
        REMOTE,
        MCP,
        tool,
        f"session {key(HERE)}",
        "mcp",
    )
    assert json.loads(act.body) == {"name": REMOTE, **arguments}  # the exact key, and only what was given
    assert act.wait_s == (600.0 if "wait_until" in arguments else 0.0)


def test_the_owners_refusal_is_the_tools_with_its_status_and_code() -> None:
    refusal = {"error": "allow_always is a person's answer", "status": 409, "code": "allow_always_off"}
    found = context(Reply(409, json.dumps(refusal).encode()))
    assert called(found, "session.allow", name=REMOTE, always=True) == (refusal, True)
    odd = context(Reply(409, b'{"message": "m", "status": "x", "code": "c"}'))
    assert called(odd, "session.cancel", name=REMOTE) == (
        {"error": "laptop answered 409", "status": 409, "code": "c"},
        True,
    )
    gone = context(None)
    answer, refused = called(gone, "session.send", name=REMOTE, prompt="hi")
    assert (refused, answer["status"], answer["code"]) == (True, 502, "peer_unreachable")


def test_list_sees_the_swarm_and_each_session_says_its_node() -> None:
    found = context()
    answer, refused = called(found, "session.list")
    assert not refused
    listed = {(row["session_key"], row["node"]) for row in answer["sessions"]}
    assert (key(HERE), "gibson") in listed and (REMOTE, "laptop") in listed
    assert (f"{LAPTOP}:13:5", "laptop") not in listed  # ended
    assert (f"{LAPTOP}:13:5", "laptop") in {
        (row["session_key"], row["node"])
        for row in called(found, "session.list", include_ended=True)[0]["sessions"]
    }
    ambiguous, refused = called(found, "session.find", name="twin")
    assert refused and [where["node"] for where in ambiguous["nodes"]] == ["desk", "laptop"]
    assert sent(found) == []


def owner_says(found: Context, tool: str, arguments: object) -> Reply:
    async def hung_up() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    request = Request({"type": "http", "method": "POST", "path": "/swarm/act", "headers": []}, hung_up)
    act = Act(None, MCP, tool, json.dumps(arguments), "session x:1:2", "mcp")
    came = Through(LAPTOP, "laptop", "session x:1:2", "mcp")
    return asyncio.run(tools.dispatcher(found)(act, came, request))


def test_the_owner_runs_its_own_tool_on_its_own_sessions_under_its_own_fences() -> None:
    found = context()
    read = owner_says(found, "session.read_state", {"name": "here"})  # "here" is on laptop too: not here
    assert read.status == 200 and json.loads(read.body)["session_key"] == key(HERE)
    always = json.loads(owner_says(found, "session.allow", {"name": "here", "always": True}).body)
    assert always["code"] == "allow_always_off"
    elsewhere = owner_says(found, "session.read_state", {"name": "builder"})
    assert elsewhere.status == 404  # a session only a peer has is none of this node's
    for tool, arguments, status in (
        ("session.nothing", {}, 404),
        ("session.find", [1], 400),
        ("session.find", {"name": "here", "extra": 1}, 400),
    ):
        assert owner_says(found, tool, arguments).status == status
    assert sent(found) == []
