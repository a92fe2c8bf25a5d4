"""Where the MCP server is reached and who is calling: the unix socket, loopback behind the
bearer token and the Origin check, and ``rosterd mcp`` (the stdio bridge a harness starts),
through which a process inside a session's tree is that session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import httpx
import pytest

from tests.mcpserver.client import bridge, ok, refused, run, tcp, through, unix
from tests.runner.conftest import Headless

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _post(headless: Headless, headers: dict[str, str], method: str = "POST") -> httpx.Response:
    with headless.daemon.tcp() as client:
        if method == "GET":
            return client.get("/mcp", headers={**headers, "Accept": "text/event-stream"})
        return client.post("/mcp", json=INITIALIZE, headers={**HEADERS, **headers})


def test_loopback_needs_the_bearer_token(headless: Headless) -> None:
    headless.daemon.start()
    token = headless.daemon.token
    assert ok(tcp(headless.daemon, token), "session.list")["caller"] is None  # loopback names nobody
    tools = run(tcp(headless.daemon, token), lambda c: c.list_tools()).tools
    assert len(tools) == 11
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {token}"}):
        answer = _post(headless, headers)
        assert answer.status_code == 401, answer.text
        assert "error" in answer.json()
    assert _post(headless, {"Authorization": f"Bearer {token}"}).status_code == 200


@pytest.mark.parametrize("method", ["POST", "GET"])
def test_a_page_on_another_origin_is_refused_whatever_the_method(headless: Headless, method: str) -> None:
    headless.daemon.start()
    bearer = {"Authorization": f"Bearer {headless.daemon.token}"}
    for origin in ("http://evil.example", f"http://127.0.0.1:{headless.daemon.port + 1}", "null"):
        answer = _post(headless, {**bearer, "Origin": origin}, method)
        assert answer.status_code == 403, (origin, answer.text)
        assert answer.json() == {"error": f"the Origin {origin!r} is not this daemon's"}
    own = _post(headless, {**bearer, "Origin": f"http://127.0.0.1:{headless.daemon.port}"})
    assert own.status_code == 200, own.text


def test_the_unix_socket_and_the_bridge_answer_without_a_token(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start(name="reachable")["session_key"]
    for client in (unix(headless.daemon), bridge(headless.daemon)):
        assert ok(client, "session.find", name="reachable")["session_key"] == key


def _offered(headless: Headless, key: str) -> list[dict[str, Any]]:
    answer = headless.prompt(key, "MCP SERVERS", wait="idle")
    assert answer.status_code == 200, answer.text
    return json.loads(answer.json()["record"]["recap"])


def test_every_headless_harness_is_offered_the_bridge_on_new_and_on_load(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start()["session_key"]
    wanted = [
        {
            "name": "rosterd",
            "command": sys.executable,
            "args": ["-m", "roost.faces.cli.rosterd", "mcp", "--socket", str(headless.daemon.socket)],
            "env": [],
        }
    ]
    assert _offered(headless, key) == wanted
    headless.post(f"/sessions/{key}/suspend")
    assert _offered(headless, key) == wanted  # resumed: session/load offered it again


def test_a_process_in_a_sessions_tree_calling_through_the_bridge_is_that_session(headless: Headless) -> None:
    headless.daemon.start()
    parent = headless.start(name="parent", policy="auto")["session_key"]
    other = headless.start(name="other")["session_key"]
    listed = through(headless, parent, "session.list")
    assert listed["is_error"] is False
    assert listed["result"]["caller"] == parent
    assert through(headless, other, "session.list")["result"]["caller"] == other
    child = through(headless, parent, "session.spawn", harness="fake", name="child")["result"]["record"]
    assert (child["parent_session_key"], child["permission_policy"]) == (parent, "auto")
    assert child["cwd"] == headless.record(parent)["cwd"]
    stricter = through(headless, parent, "session.spawn", harness="fake", policy="attention")["result"][
        "record"
    ]
    assert (stricter["parent_session_key"], stricter["permission_policy"]) == (parent, "attention")
    orphan = through(headless, other, "session.spawn", harness="fake")["result"]["record"]
    assert (orphan["parent_session_key"], orphan["permission_policy"]) == (other, "attention")
    # Agents talking to agents: the parent sends its child work and reads the recap.
    sent = through(headless, parent, "session.send", name="child", prompt="run the tests", wait_until="idle")
    assert sent["result"]["wait"] == {"until": "idle", "reached": True, "stale": False}
    assert sent["result"]["record"]["recap"] == "echo: run the tests"


def test_the_bridge_outside_any_session_calls_anonymously(headless: Headless) -> None:
    headless.daemon.start()
    assert ok(bridge(headless.daemon), "session.list")["caller"] is None
    nowhere = refused(bridge(headless.daemon), "session.spawn", harness="fake")
    assert nowhere["field"] == "cwd"


def _bridge_lines(headless: Headless, lines: list[bytes], socket: str | None = None) -> list[dict[str, Any]]:
    argv = [
        sys.executable,
        "-m",
        "roost.faces.cli.rosterd",
        "mcp",
        "--socket",
        socket or str(headless.daemon.socket),
    ]
    proc = subprocess.run(
        argv, input=b"".join(lines), capture_output=True, timeout=60, env=headless.daemon.env
    )
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_the_bridge_answers_each_line_and_says_when_no_daemon_answers(headless: Headless) -> None:
    headless.daemon.start()
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    lines = [json.dumps(INITIALIZE).encode() + b"\n", b"not json\n", json.dumps(listing).encode() + b"\n"]
    answers = _bridge_lines(headless, lines)
    by_id = {answer.get("id"): answer for answer in answers}
    assert by_id[1]["result"]["serverInfo"]["name"] == "rosterd"
    assert len(by_id[2]["result"]["tools"]) == 11
    assert by_id[None]["error"]["code"] == -32700
    gone = str(headless.daemon.roost.root / "gone.sock")
    [refusal] = _bridge_lines(headless, [json.dumps(listing).encode() + b"\n"], socket=gone)
    assert refusal["id"] == 2 and refusal["error"]["code"] == -32000
    assert "the daemon is not reachable" in refusal["error"]["message"]


def test_the_bridge_refuses_a_malformed_call(headless: Headless) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "roost.faces.cli.rosterd", "mcp", "extra"],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, **headless.daemon.env},
    )
    assert proc.returncode == 1
    assert proc.stderr == "usage: rosterd mcp [--socket PATH]\n"
