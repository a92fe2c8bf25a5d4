"""Agents on two machines giving each other work through rosterd's MCP tools: a headless session
on node A (the fake adapter, calling the tools as a harness does, through the stdio bridge the
runner offered it) starts a child on node B, sends it a task by name and waits, and reads its
recap. The child knows its parent across nodes, and keeps its policy.

A real Claude Code doing the same, scripted by the fake model API, is
tests/agents/test_handoff_acp.py's last test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.mesh.swarmnodes import SwarmNode
from tests.mesh.test_nodes_handoff import pair, record, start, turn

__all__ = ["pair"]

pytestmark = pytest.mark.alone


def tool(node: SwarmNode, key: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """What the session ``key``'s harness got back calling ``name`` through rosterd's MCP server."""
    answer: dict[str, Any] = json.loads(turn(node, key, f"MCP {name} {json.dumps(arguments)}")["recap"])
    return answer


def test_a_session_spawns_a_child_on_another_node_sends_it_a_task_and_reads_its_recap(
    pair: tuple[SwarmNode, SwarmNode, Path],
) -> None:
    a, b, project = pair
    answer = a.post("/sessions", {"harness": "fake", "cwd": str(project), "name": "boss", "policy": "auto"})
    boss = answer.json()["record"]["session_key"]
    spawned = tool(a, boss, "session.spawn", {"harness": "fake", "node": "n2", "name": "helper"})
    assert not spawned["is_error"], spawned
    child = spawned["result"]["record"]
    assert child["session_key"].startswith(b.identity().node_id + ":")
    assert (child["node"], child["name"], child["cwd"]) == ("n2", "helper", str(project))
    assert (child["parent_session_key"], child["permission_policy"]) == (boss, "auto")
    assert record(b, child["session_key"])["parent_session_key"] == boss
    a.wait_for(lambda: a.get("/sessions/helper", check=False).status_code == 200, "A to hear of helper")
    sent = tool(
        a, boss, "session.send", {"name": "helper", "prompt": "run the relay tests", "wait_until": "idle"}
    )
    assert not sent["is_error"], sent
    assert sent["result"]["record"]["recap"] == "echo: run the relay tests"
    assert sent["result"]["wait"]["reached"] is True
    state = tool(a, boss, "session.read_state", {"name": "helper"})
    assert (state["result"]["activity"], state["result"]["recap"]) == ("idle", "echo: run the relay tests")


def test_a_remote_spawn_is_refused_as_a_local_one_would_be(pair: tuple[SwarmNode, SwarmNode, Path]) -> None:
    a, b, project = pair
    boss = start(a, project)  # policy attention: a child may not be looser
    looser = tool(a, boss, "session.spawn", {"harness": "fake", "node": "n2", "policy": "auto"})
    assert (looser["is_error"], looser["result"]["code"]) == (True, "policy_too_loose")
    nowhere = tool(a, boss, "session.spawn", {"harness": "fake", "node": "n9"})
    assert (nowhere["is_error"], nowhere["result"]["code"]) == (True, "no_such_node")
    forged = tool(a, boss, "session.spawn", {"harness": "fake", "parent_session_key": "x:1:2"})
    assert (forged["is_error"], forged["result"]["field"]) == (True, "parent_session_key")
    missing = tool(a, boss, "session.spawn", {"harness": "fake", "node": "n2", "cwd": str(project / "nope")})
    assert missing["is_error"] and missing["result"]["code"] == "bad_cwd", missing
    assert [r for r in b.get("/snapshot").json()["records"] if r.get("lane") == "headless"] == []
