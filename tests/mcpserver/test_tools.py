"""Every tool against a real daemon and real headless sessions (the fake ACP adapter), through
the official SDK's client on the unix socket: what each answers, and each refusal, which is the
API's own failure (status, ``code``, message) as a tool error."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client, MCPError
from mcp.types import INVALID_PARAMS

from roost.faces.mcp.server import NOT_A_MESSAGE
from roost.faces.mcp.tools import BRIEF
from tests.api.agentpane import start_agent
from tests.conftest import Roost
from tests.mcpserver.client import ok, refused, run, unix
from tests.runner.conftest import Headless, sessions

START, END = b"\x1b[200~", b"\x1b[201~"
TOOLS = [
    "session.list",
    "session.find",
    "session.read_state",
    "session.spawn",
    "session.fork",
    "session.send",
    "session.cancel",
    "session.allow",
    "session.deny",
    "budget.list",
    "budget.lift",
]


def test_the_tools_are_listed_with_their_input_schemas(headless: Headless) -> None:
    headless.daemon.start()
    listed = run(unix(headless.daemon), lambda c: c.list_tools()).tools
    assert [tool.name for tool in listed] == TOOLS
    by_name = {tool.name: tool for tool in listed}
    send = by_name["session.send"].input_schema
    assert send["type"] == "object" and send["additionalProperties"] is False
    assert set(send["required"]) == {"name", "prompt"}
    assert set(send["properties"]) == {"name", "prompt", "wait_until", "timeout_s"}
    assert by_name["session.list"].annotations.read_only_hint is True
    assert by_name["session.spawn"].annotations.read_only_hint is False

    async def server(client: Client) -> Any:
        return client.server_info

    assert run(unix(headless.daemon), server).name == "rosterd"


def test_list_find_and_read_state(headless: Headless) -> None:
    headless.daemon.start()
    first = headless.start(name="tests: holder")["session_key"]
    second = headless.start(name="tests: other")["session_key"]
    mcp = unix(headless.daemon)
    listed = ok(mcp, "session.list")
    assert listed["caller"] is None  # the test is in no session
    keys = {row["session_key"]: row for row in listed["sessions"]}
    assert {first, second} <= keys.keys()
    assert set(keys[first]) == set(BRIEF)
    assert (keys[first]["name"], keys[first]["lane"], keys[first]["activity"]) == (
        "tests: holder",
        "headless",
        "idle",
    )
    found = ok(unix(headless.daemon), "session.find", name="tests: holder")
    assert found == keys[first]
    assert ok(unix(headless.daemon), "session.find", name=first)["session_key"] == first
    state = ok(unix(headless.daemon), "session.read_state", name="tests: other")
    assert state == headless.record(second)
    headless.post(f"/sessions/{second}/stop")
    assert second not in {r["session_key"] for r in ok(unix(headless.daemon), "session.list")["sessions"]}
    ended = ok(unix(headless.daemon), "session.list", include_ended=True)["sessions"]
    assert any(r["session_key"] == second and r["liveness"] == "ended" for r in ended)


def test_find_with_an_ambiguous_name_lists_the_candidates_and_never_guesses(headless: Headless) -> None:
    headless.daemon.start()
    keys = sorted(headless.start(name="twin")["session_key"] for _ in range(2))
    answer = refused(unix(headless.daemon), "session.find", name="twin")
    assert answer["status"] == 409
    assert answer["error"] == "the name 'twin' is ambiguous"
    assert sorted(answer["candidates"]) == keys
    api = headless.daemon.unix().get("/sessions/twin")
    assert api.json() == {key: value for key, value in answer.items() if key != "status"}
    for tool in ("session.read_state", "session.send", "session.cancel", "session.allow"):
        arguments: dict[str, Any] = {"name": "twin", **({"prompt": "hi"} if tool == "session.send" else {})}
        assert refused(unix(headless.daemon), tool, **arguments)["candidates"], tool


def test_an_unknown_session_is_the_apis_404(headless: Headless) -> None:
    headless.daemon.start()
    answer = refused(unix(headless.daemon), "session.read_state", name="nosuch")
    assert answer == {"error": "no session 'nosuch'", "status": 404}


def test_send_with_wait_until_idle_returns_the_record_with_its_recap(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start(name="tests: holder")["session_key"]
    answer = ok(
        unix(headless.daemon),
        "session.send",
        name="tests: holder",
        prompt="run the relay tests",
        wait_until="idle",
    )
    assert answer["input"] == "accepted"
    assert answer["wait"] == {"until": "idle", "reached": True, "stale": False}
    record = answer["record"]
    assert (record["session_key"], record["activity"], record["recap"]) == (
        key,
        "idle",
        "echo: run the relay tests",
    )
    quick = ok(unix(headless.daemon), "session.send", name=key, prompt="SLOW 1")
    assert "wait" not in quick and quick["input"] == "accepted"
    assert headless.until(key, activity="idle", activity_event="end_turn")["recap"].endswith("slow done")


def test_a_wait_that_times_out_says_it_was_not_reached(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start()["session_key"]
    answer = ok(
        unix(headless.daemon), "session.send", name=key, prompt="SLOW 5", wait_until="idle", timeout_s=1
    )
    assert answer["wait"] == {"until": "idle", "reached": False, "stale": True}
    assert answer["record"]["activity"] == "active"
    headless.until(key, activity="idle", timeout=15)


def test_a_suspended_session_is_resumed_by_send_in_the_same_call(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start()["session_key"]
    ok(unix(headless.daemon), "session.send", name=key, prompt="first", wait_until="idle")
    assert headless.post(f"/sessions/{key}/suspend").json()["record"]["liveness"] == "suspended"
    answer = ok(unix(headless.daemon), "session.send", name=key, prompt="HISTORY", wait_until="idle")
    record = answer["record"]
    assert (record["liveness"], record["activity"]) == ("live", "idle")
    assert record["recap"] == "history: 1 turns; last: first"


def test_cancel_ends_a_running_turn(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start()["session_key"]
    ok(unix(headless.daemon), "session.send", name=key, prompt="SLOW 30")
    headless.until(key, activity="active")
    busy = refused(unix(headless.daemon), "session.send", name=key, prompt="again")
    assert (busy["status"], busy["code"]) == (409, "busy")
    ok(unix(headless.daemon), "session.cancel", name=key)
    assert headless.until(key, activity="idle")["activity_event"] == "cancelled"
    nothing = refused(unix(headless.daemon), "session.cancel", name=key)
    assert nothing == {"error": "no turn is running", "status": 409, "code": "not_running"}


def _pending(headless: Headless, key: str) -> dict[str, Any]:
    answer = ok(
        unix(headless.daemon), "session.send", name=key, prompt="PERMIT", wait_until="needs_attention"
    )
    assert answer["wait"]["reached"], answer
    return answer["record"]


def test_allow_runs_the_tool_and_deny_refuses_it(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start()["session_key"]
    record = _pending(headless, key)
    assert record["pending"]["summary"] == "rm -rf build"
    asked = refused(unix(headless.daemon), "session.send", name=key, prompt="more")
    assert (asked["status"], asked["code"]) == (409, "needs_attention")
    ok(unix(headless.daemon), "session.allow", name=key)
    assert headless.until(key, activity="idle")["recap"] == "tool completed (allow)"
    _pending(headless, key)
    ok(unix(headless.daemon), "session.deny", name=key, reason="not today")
    assert headless.until(key, activity="idle")["recap"] == "tool failed (reject)"
    for tool in ("session.allow", "session.deny"):
        nothing = refused(unix(headless.daemon), tool, name=key)
        assert nothing == {
            "error": "nothing is pending: the request was answered already, or the session moved on",
            "status": 409,
            "code": "nothing_pending",
        }


def test_spawn_over_loopback_is_nobodys_child_and_runs_under_attention(headless: Headless) -> None:
    headless.daemon.start()
    folder = headless.daemon.roost.root
    record = ok(unix(headless.daemon), "session.spawn", harness="fake", cwd=str(folder), name="child")[
        "record"
    ]
    assert (record["lane"], record["name"], record["cwd"]) == ("headless", "child", str(folder))
    assert (record["parent_session_key"], record["permission_policy"]) == (None, "attention")
    auto = refused(unix(headless.daemon), "session.spawn", harness="fake", cwd=str(folder), policy="auto")
    assert (auto["status"], auto["code"]) == (409, "policy_too_loose")  # no person chose it
    nowhere = refused(unix(headless.daemon), "session.spawn", harness="fake")
    assert nowhere["status"] == 400 and nowhere["field"] == "cwd"
    unknown = refused(unix(headless.daemon), "session.spawn", harness="nosuch", cwd=str(folder))
    assert (unknown["status"], unknown["code"]) == (400, "unknown_harness")
    relative = refused(unix(headless.daemon), "session.spawn", harness="fake", cwd="project")
    assert relative["status"] == 400 and relative["field"] == "cwd"
    missing = refused(unix(headless.daemon), "session.spawn", harness="fake", cwd=str(folder / "nowhere"))
    assert (missing["status"], missing["code"]) == (400, "bad_cwd")


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("session.list", {"bogus": 1}, "bogus"),
        ("session.find", {}, "name"),
        ("session.find", {"name": ""}, "name"),
        ("session.find", {"name": "a\x1bb"}, "name"),
        ("session.find", {"name": "n" * 257}, "name"),
        ("session.find", {"name": 7}, "name"),
        ("session.send", {"name": "x", "prompt": ""}, "prompt"),
        ("session.send", {"name": "x", "prompt": "p" * 65_537}, "prompt"),
        ("session.send", {"name": "x", "prompt": "hi", "wait_until": "done"}, "wait_until"),
        ("session.send", {"name": "x", "prompt": "hi", "timeout_s": 0}, "timeout_s"),
        ("session.send", {"name": "x", "prompt": "hi", "timeout_s": 86_401}, "timeout_s"),
        ("session.send", {"name": "x", "prompt": "hi", "wait": "idle"}, "wait"),
        ("session.spawn", {"harness": "fake", "policy": "never"}, "policy"),
        ("session.spawn", {"harness": "fa\nke"}, "harness"),
        ("session.allow", {"name": "x", "always": "yes"}, "always"),
        ("session.deny", {"name": "x", "reason": "r" * 1001}, "reason"),
        ("session.allow", {"name": "x", "request_id": ""}, "request_id"),
        ("session.deny", {"name": "x", "request_id": "r\n1"}, "request_id"),
    ],
)
def test_bad_arguments_are_refused_naming_the_field_and_change_nothing(
    headless: Headless, tool: str, arguments: dict[str, Any], field: str
) -> None:
    headless.daemon.start()
    before = sessions(headless)
    answer = refused(unix(headless.daemon), tool, **arguments)
    assert (answer["status"], answer["field"], answer["code"]) == (400, field, "bad_argument"), answer
    assert answer["error"].startswith(field)
    assert "pydantic" not in answer["error"] and "Input should" not in answer["error"]
    assert "p" * 100 not in answer["error"] and "\x1b" not in answer["error"]
    assert sessions(headless) == before


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("session.list", {"include_ended": "yes"}, "include_ended must be true or false"),
        (
            "session.find",
            {"name": 7},
            "name must be a session's key, a pid on this node, or a display name of 1 to 256 "
            "characters, one line",
        ),
        (
            "session.read_state",
            {"name": ""},
            "name must be a session's key, a pid on this node, or a display "
            "name of 1 to 256 characters, one line",
        ),
        (
            "session.spawn",
            {"harness": "fake", "cwd": 5},
            "cwd must be an absolute folder or ~/… of 1 to 4096 characters, one line",
        ),
        ("session.spawn", {"harness": "fake", "policy": "never"}, "policy must be one of auto, attention"),
        ("session.send", {"name": "x", "prompt": ""}, "prompt must be text of 1 to 65536 characters"),
        (
            "session.send",
            {"name": "x", "prompt": "hi", "wait_until": "done"},
            "wait_until must be one of idle, needs_attention, ended",
        ),
        (
            "session.send",
            {"name": "x", "prompt": "hi", "timeout_s": 0},
            "timeout_s must be the seconds the wait may last, from 1 to 86400",
        ),
        (
            "session.cancel",
            {"name": None},
            "name must be a session's key, a pid on this node, or a display "
            "name of 1 to 256 characters, one line",
        ),
        ("session.allow", {"name": "x", "always": "yes"}, "always must be true or false"),
        (
            "session.allow",
            {"name": "x", "request_id": ""},
            "request_id must be a request's id of 1 to 64 characters, one line",
        ),
        ("session.deny", {"name": "x", "reason": "r" * 1001}, "reason must be text of 1 to 1000 characters"),
    ],
)
def test_each_tool_refuses_a_bad_argument_in_a_sentence_of_its_own(
    headless: Headless, tool: str, arguments: dict[str, Any], message: str
) -> None:
    headless.daemon.start()
    answer = refused(unix(headless.daemon), tool, **arguments)
    assert answer == {"error": message, "status": 400, "code": "bad_argument", "field": message.split()[0]}


@pytest.mark.parametrize(
    "body",
    [
        {"jsonrpc": "1.0", "id": 1, "method": "tools/call", "params": {"name": "session.list"}},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": 5},
        [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}],
    ],
)
def test_a_body_that_is_no_json_rpc_message_is_refused_in_a_sentence(headless: Headless, body: Any) -> None:
    headless.daemon.start()
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
    with headless.daemon.unix() as client:
        answer = client.post("/mcp", json=body, headers=headers)
    assert answer.status_code == 400
    assert answer.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": NOT_A_MESSAGE},
    }
    assert "pydantic" not in answer.text


def test_an_unknown_tool_is_a_protocol_error(headless: Headless) -> None:
    headless.daemon.start()

    async def bogus(client: Client) -> MCPError | None:
        try:
            await client.call_tool("session.bogus", {})
        except MCPError as error:
            return error
        return None

    error = run(unix(headless.daemon), bogus)
    assert error is not None and (error.code, error.message) == (
        INVALID_PARAMS,
        "no tool 'session.bogus'; see tools/list",
    )


def _pane_session(headless: Headless, roost: Roost) -> str:
    pane = roost.start("sh -c 'roost state working; exec sleep 600'", session="panes")
    record = headless.daemon.wait_for(
        lambda: headless.daemon.record_where(lambda r: (r.get("tmux") or {}).get("pane") == pane),
        what=f"a session in {pane}",
    )
    return str(record["session_key"])


def test_a_terminal_pane_is_listed_found_and_read_and_refuses_the_headless_actions(
    headless: Headless, roost: Roost
) -> None:
    headless.daemon.start()
    key = _pane_session(headless, roost)
    listed = {r["session_key"]: r for r in ok(unix(headless.daemon), "session.list")["sessions"]}
    assert (listed[key]["lane"], listed[key]["activity"]) == ("interactive", "active")
    assert ok(unix(headless.daemon), "session.find", name=key)["session_key"] == key
    assert ok(unix(headless.daemon), "session.read_state", name=key)["tmux"]["socket"] == roost.socket
    cancel = refused(unix(headless.daemon), "session.cancel", name=key)
    assert cancel == {"error": f"{key} is not a headless session", "status": 404, "code": "not_headless"}
    api = headless.post(f"/sessions/{key}/cancel")
    assert (api.status_code, api.json()) == (404, {k: v for k, v in cancel.items() if k != "status"})
    for tool in ("session.allow", "session.deny"):  # it waits on nothing
        answer = refused(unix(headless.daemon), tool, name=key)
        assert (answer["status"], answer["code"]) == (409, "nothing_pending"), answer
    # A shell that badged itself is no complete identity: no harness, no session id.
    unknown = refused(unix(headless.daemon), "session.send", name=key, prompt="hello")
    assert (unknown["status"], unknown["code"], unknown["input"]) == (409, "not_promptable", "rejected")
    assert ok(unix(headless.daemon), "session.read_state", name=key)["activity"] == "active"


def test_send_to_an_agent_in_a_pane_is_the_apis_fenced_prompt(headless: Headless, roost: Roost) -> None:
    headless.daemon.start()
    agent = start_agent(roost, headless.daemon)
    before = agent.record()
    answer = ok(
        unix(headless.daemon),
        "session.send",
        name=before["session_key"],
        prompt="run the tests",
        wait_until="idle",
    )
    assert answer["input"] == "accepted" and answer["wait"] == {"until": "idle", "reached": True}
    record = answer["record"]
    assert (record["session_key"], record["activity"]) == (before["session_key"], "idle")
    assert (
        record["completed_revision"] > before["revision"]
    )  # the turn the prompt began, not the idle before it
    assert agent.received() == START + b"run the tests" + END + b"\r"
    agent.nothing_arrives(agent.received())  # written once
    too_long = refused(unix(headless.daemon), "session.send", name=before["session_key"], prompt="é" * 8193)
    assert (too_long["status"], too_long["limit"]) == (413, 16_384)


def test_a_blocked_agent_in_a_pane_is_refused_and_nothing_is_written(
    headless: Headless, roost: Roost
) -> None:
    headless.daemon.start()
    agent = start_agent(roost, headless.daemon, "--dialog-on", "deploy")
    key = agent.record()["session_key"]
    asked = ok(
        unix(headless.daemon), "session.send", name=key, prompt="please deploy", wait_until="needs_attention"
    )
    assert asked["wait"] == {"until": "needs_attention", "reached": True}
    assert asked["record"]["activity"] == "needs_attention"
    before = agent.received()
    answer = refused(unix(headless.daemon), "session.send", name=key, prompt="1")
    assert (answer["status"], answer["code"], answer["input"]) == (409, "blocked", "rejected")
    assert answer["reason"].startswith("blocked") and answer["session_id"] == agent.pane
    agent.nothing_arrives(before)
