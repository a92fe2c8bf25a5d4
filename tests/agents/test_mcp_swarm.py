"""A headless Claude Code on node A gives work to a session on node B through rosterd's MCP tools,
scripted by the fake Messages API: it spawns a child on B, sends it a task by name and waits,
then reads the child's recap. The child (the fake ACP adapter on B) knows its parent, A's
session, and runs under its policy.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agents.conftest import API_KEY, CLAUDE_QUIET, TURN_TIMEOUT
from tests.agents.test_headless_acp import NODE, _claude_home
from tests.agents.test_mcp_headless import _offered
from tests.fakes.anthropic_api import AnthropicAPI
from tests.fakes.model_api import Step, ToolCall, default_script
from tests.mesh.swarmnodes import SwarmNode, make
from tests.nodes import Network
from tests.runner.conftest import ADAPTER

pytestmark = pytest.mark.alone


@pytest.fixture
def swarm(network: Network, agent_bin: Path) -> Iterator[tuple[SwarmNode, SwarmNode, AnthropicAPI, Path]]:
    """Node A runs Claude's adapter, node B the fake one; one fake Messages API on the bridge."""
    api = AnthropicAPI(host=f"100.64.{network.subnet}.1")
    with tempfile.TemporaryDirectory(prefix="rm", dir="/tmp") as short:
        root = Path(short)
        project = root / "project"
        project.mkdir()

        def prepare(node: SwarmNode) -> None:
            if node.name == "n1":
                _claude_home(node.root / "home", project)
                node.settings = {"harness.claude": {"adapter": f"{NODE} {agent_bin}/claude-agent-acp"}}
                node.extra_env = {
                    "IS_SANDBOX": "yes",
                    "ANTHROPIC_BASE_URL": api.url,
                    "ANTHROPIC_API_KEY": API_KEY,
                }
                node.extra_env.update(CLAUDE_QUIET)
            else:
                node.settings = {"harness.fake": {"adapter": f"{sys.executable} {ADAPTER}"}}

        a, b = make(network, root, 2, prepare)
        try:
            b.ok("join", a.address, "--token", a.ok("invite").strip())
            yield a, b, api, project
        finally:
            for node in (a, b):
                node.stop()
            api.close()


def _turn(node: SwarmNode, key: str, text: str) -> dict[str, Any]:
    body = {"text": text, "wait": "idle", "timeout_s": TURN_TIMEOUT}
    answer = node.post(f"/sessions/{key}/prompt", body, timeout=120)
    assert answer.status_code == 200 and answer.json()["wait"]["reached"], answer.text
    return dict(answer.json()["record"])


def _results(api: AnthropicAPI) -> list[dict[str, Any]]:
    """Every tool result Claude sent back to the model, parsed, in order."""
    found: list[dict[str, Any]] = []
    for request in api.requests:
        for message in request.body.get("messages") or []:
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    inner = block["content"]
                    text = inner if isinstance(inner, str) else "".join(c.get("text", "") for c in inner)
                    parsed = json.loads(text)
                    if parsed not in found:
                        found.append(parsed)
    return found


def test_claude_on_one_node_spawns_a_child_on_another_sends_it_work_and_reads_its_recap(
    swarm: tuple[SwarmNode, SwarmNode, AnthropicAPI, Path],
) -> None:
    a, b, api, project = swarm
    started = a.post("/sessions", {"harness": "claude", "cwd": str(project), "policy": "auto"}, timeout=90)
    assert started.status_code == 201, started.text
    boss = started.json()["record"]["session_key"]
    _turn(a, boss, "hello there")
    tools = _offered(api.requests[-1].body)
    task = {"name": "helper", "prompt": "run the relay tests", "wait_until": "idle", "timeout_s": 60}
    plan = ToolCall(
        "spawn a helper on n2",
        tool=tools["spawn"],
        input={"harness": "fake", "node": "n2", "name": "helper"},
        then=ToolCall(
            "give it the task",
            tool=tools["send"],
            input=task,
            then=ToolCall(
                "read its state", tool=tools["read_state"], input={"name": "helper"}, then="DELEGATED"
            ),
        ),
    )

    def script(prompt: str) -> Step:
        return plan if "DELEGATE" in prompt else default_script(prompt)

    api.script = script
    done = _turn(a, boss, "DELEGATE the relay tests")
    assert done["recap"] == "DELEGATED"
    spawned, sent, state = _results(api)[-3:]
    child = spawned["record"]
    assert child["session_key"].startswith(b.identity().node_id + ":")
    assert (child["parent_session_key"], child["permission_policy"]) == (boss, "auto")
    assert sent["record"]["recap"] == "echo: run the relay tests" and sent["wait"]["reached"]
    assert (state["activity"], state["recap"]) == ("idle", "echo: run the relay tests")
    there = b.get(f"/sessions/{child['session_key']}").json()
    assert (there["name"], there["parent_session_key"]) == ("helper", boss)
