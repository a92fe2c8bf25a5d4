"""Headless sessions of the harnesses that speak ACP themselves: Gemini CLI (``gemini --acp``)
and OpenCode (``opencode acp``), the pinned versions the agent tier installs, offline.

Each is configured as its screens' recipe configures it (tests/fixtures/screens/<agent>/
recipe.toml, through :func:`tests.recorder.prepare`): Gemini CLI against the fake Gemini API
on node 22, OpenCode's Anthropic provider against the fake Anthropic API, asking before a shell
command. They walk what Claude's and Codex's adapters walk (tests/agents/test_headless_acp.py):
a turn with its recap, a permission denied and allowed, a cancel, suspend and resume with the
history (where the adapter can load a session: Gemini CLI's cannot, and is kept live), the
daemon killed mid-turn.
"""

from __future__ import annotations

import json
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from roost.agents import manifest
from tests.agents.conftest import TIMINGS, TURN_TIMEOUT
from tests.agents.test_headless_acp import (
    Real,
    cancelled_mid_turn,
    killed_daemon_mid_turn_comes_back,
    suspended_on_idle_and_resumed_with_the_history,
)
from tests.conftest import Roost
from tests.daemon.fixture import Daemon, daemon
from tests.fakes.model_api import reply_for
from tests.recorder import APIS, SCREENS, prepare, script
from tests.runner.conftest import Headless, end_holders

__all__ = ["daemon"]

pytestmark = pytest.mark.agent

ADAPTERS = {
    "gemini": lambda bin_: f"{bin_}/node {bin_}/gemini --acp",
    "opencode": lambda bin_: f"{bin_.parent}/opencode-linux-x64/bin/opencode acp",
}
"""How each harness is run as its own adapter: Gemini CLI on the node 22 beside it, OpenCode's
native binary."""


@pytest.fixture(params=sorted(ADAPTERS))
def native(request: pytest.FixtureRequest, roost: Roost, daemon: Daemon, agent_bin: Path) -> Iterator[Real]:
    """One harness's headless sessions (the daemon not started), configured by its recipe."""
    harness = request.param
    recipe = tomllib.loads((SCREENS / harness / "recipe.toml").read_text())
    api = APIS[recipe.get("api", "anthropic")](script=script(recipe.get("tool", "Bash")))
    project = (roost.root / "project").resolve()
    project.mkdir()
    home, config = Path(roost.env["HOME"]), Path(roost.env["XDG_CONFIG_HOME"])
    env = prepare(recipe, api.url, home, config, project, roost.env["PATH"])
    env.setdefault("PATH", f"{agent_bin}:{roost.env['PATH']}")
    daemon.settings[f"harness.{harness}"] = {"adapter": ADAPTERS[harness](agent_bin)}
    daemon.settings["runner"] = {"idle_timeout_s": 600}
    headless = Headless(daemon, roost.root)
    found = Real(harness, headless, api, project, env)
    try:
        yield found
    finally:
        if daemon.proc is not None and daemon.proc.poll() is None:
            daemon.stop()
        end_holders(headless)
        api.close()


def test_a_headless_turn_reads_idle_with_the_reply_as_recap(native: Real) -> None:
    native.headless.daemon.start()
    began = time.monotonic()
    record = native.start(name=f"tests: {native.harness}")
    key = record["session_key"]
    assert (record["lane"], record["liveness"], record["activity"]) == ("headless", "live", "idle")
    assert record["session_id"]
    done = native.turn(key, "hello there")
    TIMINGS.append(f"{native.harness}-acp: start to first turn done {time.monotonic() - began:.2f} s")
    assert (done["activity"], done["activity_event"]) == ("idle", "end_turn")
    assert reply_for("hello there") in done["recap"]
    assert done["sources"][:2] == ["launcher", "acp"]
    # The harness is its own adapter: the process scan sees it under the holder and it nests
    # into the headless session, one row for the project, not two (other agents on the machine
    # are rows of their own).
    time.sleep(0.5)
    records = native.headless.daemon.snapshot()["records"]
    here = [r["session_key"] for r in records if r["liveness"] != "ended" and r["cwd"] == str(native.project)]
    assert here == [key]
    stopped = native.headless.post(f"/sessions/{key}/stop", timeout=30)
    assert stopped.json()["record"]["ended_reason"] == "exit"
    assert native.headless.holder_pids() == []


def _asks(native: Real, key: str, text: str) -> dict[str, Any]:
    body = native.prompt(key, text, wait="needs_attention")
    assert body["wait"]["reached"], body
    pending = body["record"]["pending"]
    assert "touch x" in (pending["summary"] or "") or pending["tool"], pending
    assert {o["kind"] for o in pending["options"]} >= {"allow_once", "reject_once"}, pending
    return pending


def test_a_permission_denied_then_allowed(native: Real) -> None:
    native.headless.daemon.start()
    key = native.start()["session_key"]
    target = native.project / "x"
    _asks(native, key, "TOOL one")
    assert native.headless.post(f"/sessions/{key}/permission", {"option": "reject"}).status_code == 200
    denied = native.headless.until(key, timeout=TURN_TIMEOUT, activity="idle")
    assert denied["activity_event"] in ("end_turn", "cancelled")
    assert not target.exists()
    _asks(native, key, "TOOL two")
    assert native.headless.post(f"/sessions/{key}/permission", {"option": "allow"}).status_code == 200
    allowed = native.headless.until(key, timeout=TURN_TIMEOUT, activity="idle")
    assert allowed["activity_event"] == "end_turn"
    assert target.exists()


def test_cancel_mid_turn(native: Real) -> None:
    cancelled_mid_turn(native)


def test_idle_past_the_timeout_suspends_and_resumes_with_the_history_where_the_adapter_can(
    native: Real,
) -> None:
    """OpenCode loads its session back; Gemini CLI's load overwrites the history it looks for
    (its manifest says ``resumes = false``), so its session stays live, and a suspend by hand
    is refused before it could cost that history."""
    found = manifest.load(native.harness)
    assert found is not None and found.acp is not None
    if found.acp.resumes:
        suspended_on_idle_and_resumed_with_the_history(native)
        return
    native.headless.daemon.settings["runner"] = {"idle_timeout_s": 2}
    native.headless.daemon.start()
    key = native.start()["session_key"]
    native.turn(key, "the first words")
    time.sleep(4)
    assert native.headless.record(key)["liveness"] == "live"
    refused = native.headless.post(f"/sessions/{key}/suspend")
    assert (refused.status_code, refused.json()["code"]) == (409, "cannot_resume"), refused.text
    done = native.turn(key, "the second words")
    assert reply_for("the second words") in done["recap"]
    assert "the first words" in json.dumps(native.api.requests[-1].body)  # the same live session


def test_the_daemon_killed_mid_turn_comes_back_and_the_turn_completes(native: Real) -> None:
    killed_daemon_mid_turn_comes_back(native)
