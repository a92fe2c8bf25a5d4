"""A real adapter's headless session handed from one node to another: two daemons in namespaces,
each with its own HOME, both talking to one fake model API on the bridge, so the API sees
whether the target's first turn carries the turns taken on the origin.

Claude's adapter (``claude-agent-acp``, bundling Claude Code) keeps its transcript under
``~/.claude/projects/``, codex's (``codex-acp``) under ``~/.codex/sessions/``, pi's (``pi-acp``,
on node 22) under ``~/.pi/agent/sessions/``; each manifest names them, and nothing else tells
the runner where they are.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.agents.conftest import API_KEY, CLAUDE_QUIET, TIMINGS, TURN_TIMEOUT
from tests.agents.test_headless_acp import NODE, _claude_home, _codex_home
from tests.agents.test_headless_pi import PI_KEY, PI_QUIET, _pi_home
from tests.fakes.anthropic_api import AnthropicAPI
from tests.fakes.model_api import ModelAPI, reply_for
from tests.fakes.responses_api import ResponsesAPI
from tests.mesh.swarmnodes import SwarmNode, make
from tests.nodes import Network

pytestmark = pytest.mark.alone

ADAPTERS = {"claude": "claude-agent-acp", "codex": "codex-acp", "pi": "pi-acp"}


@dataclass
class Pair:
    harness: str
    a: SwarmNode
    b: SwarmNode
    api: ModelAPI
    project: Path

    def turn(self, node: SwarmNode, key: str, text: str) -> dict[str, Any]:
        answer = node.post(
            f"/sessions/{key}/prompt", {"text": text, "wait": "idle", "timeout_s": TURN_TIMEOUT}, timeout=120
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["wait"]["reached"], answer.text
        return dict(answer.json()["record"])


@pytest.fixture(params=sorted(ADAPTERS))
def pair(request: pytest.FixtureRequest, network: Network, agent_bin: Path) -> Iterator[Pair]:
    harness = request.param
    bridge = f"100.64.{network.subnet}.1"
    api: ModelAPI = ResponsesAPI(host=bridge) if harness == "codex" else AnthropicAPI(host=bridge)
    with tempfile.TemporaryDirectory(prefix="rc", dir="/tmp") as short:
        root = Path(short)
        project = root / "project"
        project.mkdir()

        def prepare(node: SwarmNode) -> None:
            home = node.root / "home"
            adapter: dict[str, Any] = {"adapter": f"{NODE} {agent_bin}/{ADAPTERS[harness]}"}
            if harness == "claude":
                _claude_home(home, project)
                env = {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": API_KEY, **CLAUDE_QUIET}
            elif harness == "codex":
                _codex_home(home, project, api.url)
                env = {"INITIAL_AGENT_MODE": "workspace-write"}
            else:  # pi and its adapter need node 22, which the agent tier puts beside them
                _pi_home(home, api.url)
                env = {"PATH": f"{agent_bin}:{node.env['PATH']}", "ANTHROPIC_API_KEY": PI_KEY, **PI_QUIET}
                adapter = {"adapter": f"{agent_bin}/node {agent_bin}/pi-acp", "extension": False}
            node.settings = {f"harness.{harness}": adapter, "runner": {"idle_timeout_s": 600}}
            node.extra_env = {"IS_SANDBOX": "yes", **env}

        a, b = make(network, root, 2, prepare)
        try:
            b.ok("join", a.address, "--token", a.ok("invite").strip())
            yield Pair(harness, a, b, api, project)
        finally:
            for node in (a, b):
                node.stop()
            api.close()


def _words(api: ModelAPI) -> str:
    return json.dumps(api.requests[-1].body)


def test_two_turns_on_one_node_then_the_next_on_another_with_the_history(pair: Pair) -> None:
    a, b = pair.a, pair.b
    started = a.post("/sessions", {"harness": pair.harness, "cwd": str(pair.project)}, timeout=90)
    assert started.status_code == 201, started.text
    key = started.json()["record"]["session_key"]
    pair.turn(a, key, "the first words")
    session_id = pair.turn(a, key, "the second words")["session_id"]
    began = time.monotonic()
    answer = a.post(f"/sessions/{key}/handoff", {"to": "n2"}, timeout=150)
    assert answer.status_code == 201, answer.text
    here, there = answer.json()["record"], answer.json()["there"]
    assert (here["ended_reason"], here["handed_to"]["node"]) == ("handed_off", "n2")
    assert (there["session_id"], there["liveness"]) == (session_id, "live")
    handed = time.monotonic() - began
    asked = len(pair.api.requests)
    done = pair.turn(b, there["session_key"], "the third words")
    took = time.monotonic() - began
    TIMINGS.append(
        f"{pair.harness}-acp: handoff, suspend to first turn done on the target {took:.2f} s "
        f"(the handoff answered in {handed:.2f} s)"
    )
    print(TIMINGS[-1])
    assert done["recap"] == reply_for("the third words")
    assert len(pair.api.requests) > asked
    said = _words(pair.api)
    assert "the first words" in said and "the second words" in said  # the model sees the earlier turns
    assert reply_for("the first words").splitlines()[0] in said  # and what it answered then
    assert a.get(f"/sessions/{key}").json()["liveness"] == "ended"
