"""Headless pi sessions over npm ``pi-acp``, offline against the fake Anthropic API.

``pi-acp`` runs ``pi --mode rpc`` (pi 1.6.0, the one the screens were recorded from) and both
need node 22, so the adapter runs on the node 22 ``scripts/install-test-agents`` puts beside
them and the session's PATH starts with that bin directory: pi-acp spawns ``pi`` from PATH and
pi's ``#!/usr/bin/env node`` finds node 22 there. pi is configured as its screens' recipe does
it (tests/fixtures/screens/pi/recipe.toml): the fake API as the ``anthropic`` provider's base
URL in ``~/.pi/agent/models.json``.

pi asks no permission of its own, so pi-acp asks none for a tool; what it forwards as a
``session/request_permission`` is an extension's ``ctx.ui.select`` (here pi's permission-gate
example, which asks before ``rm -rf``), every choice as an ``allow_once`` option, ``Yes`` first.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agents.conftest import TIMINGS, TURN_TIMEOUT
from tests.agents.test_headless_acp import (
    Real,
    cancelled_mid_turn,
    killed_daemon_mid_turn_comes_back,
    suspended_on_idle_and_resumed_with_the_history,
)
from tests.conftest import Roost
from tests.daemon.fixture import Daemon, daemon
from tests.fakes.anthropic_api import AnthropicAPI
from tests.fakes.model_api import reply_for
from tests.recorder import script
from tests.runner.conftest import Headless, end_holders

__all__ = ["daemon"]

PI_KEY = "sk-ant-fake-recorder-key-0123456789"
PI_QUIET = {"PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}


def _pi_home(home: Path, url: str) -> None:
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "models.json").write_text(json.dumps({"providers": {"anthropic": {"baseUrl": url}}}))
    (agent / "settings.json").write_text(
        json.dumps({"defaultProvider": "anthropic", "defaultModel": "claude-sonnet-4-5"})
    )


@pytest.fixture
def pi_api() -> Iterator[AnthropicAPI]:
    api = AnthropicAPI(script=script("bash"))  # pi's shell tool; RMRF asks for `rm -rf build`
    yield api
    api.close()


@pytest.fixture
def pi(roost: Roost, daemon: Daemon, agent_bin: Path, pi_api: AnthropicAPI) -> Iterator[Real]:
    """Headless pi sessions (the daemon not started), pi's HOME pointed at the fake API."""
    project = (roost.root / "project").resolve()
    project.mkdir()
    _pi_home(Path(roost.env["HOME"]), pi_api.url)
    env = {"PATH": f"{agent_bin}:{roost.env['PATH']}", "ANTHROPIC_API_KEY": PI_KEY, **PI_QUIET}
    # pi-acp alone, without roost's pi extension (which a default [harness.pi] would require).
    daemon.settings["harness.pi"] = {"adapter": f"{agent_bin}/node {agent_bin}/pi-acp", "extension": False}
    daemon.settings["runner"] = {"idle_timeout_s": 600}
    headless = Headless(daemon, roost.root)
    found = Real("pi", headless, pi_api, project, env)
    yield found
    if daemon.proc is not None and daemon.proc.poll() is None:
        daemon.stop()
    end_holders(headless)


def test_a_headless_turn_reads_idle_with_the_reply_as_recap(pi: Real) -> None:
    pi.headless.daemon.start()
    began = time.monotonic()
    record = pi.start(name="tests: pi")
    key = record["session_key"]
    assert (record["lane"], record["liveness"], record["activity"]) == ("headless", "live", "idle")
    assert record["session_id"]
    done = pi.turn(key, "hello there")
    TIMINGS.append(f"pi-acp: start to first turn done {time.monotonic() - began:.2f} s")
    assert (done["activity"], done["activity_event"]) == ("idle", "end_turn")
    # pi-acp's startup info ("pi v1.6.0\n---\n"), sent outside the turn, is no part of it
    assert done["recap"] == reply_for("hello there")
    assert done["sources"][:2] == ["launcher", "acp"]
    # pi under the adapter (`node …/pi --mode rpc`) nests into the headless session: one row.
    time.sleep(0.5)
    live = [r for r in pi.headless.daemon.snapshot()["records"] if r["liveness"] != "ended"]
    assert [r["session_key"] for r in live] == [key]
    stopped = pi.headless.post(f"/sessions/{key}/stop", timeout=30)
    assert stopped.json()["record"]["ended_reason"] == "exit"
    assert pi.headless.holder_pids() == []


@pytest.fixture
def gated(pi: Real, roost: Roost, agent_bin: Path) -> Real:
    """``pi`` with pi's permission-gate example extension in its HOME."""
    example = agent_bin.parent / "@earendil-works/pi-coding-agent/examples/extensions/permission-gate.ts"
    extensions = Path(roost.env["HOME"]) / ".pi" / "agent" / "extensions"
    extensions.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(example, extensions / "permission-gate.ts")
    return pi


def _asks(pi: Real, key: str) -> dict[str, Any]:
    body = pi.prompt(key, "please RMRF", wait="needs_attention")
    assert body["wait"]["reached"], body
    pending = body["record"]["pending"]
    assert "rm -rf build" in pending["summary"]
    assert [(o["name"], o["kind"]) for o in pending["options"]] == [
        ("Yes", "allow_once"),
        ("No", "allow_once"),
    ]
    return pending


def test_an_extensions_dialog_is_a_permission_denied_and_allowed(gated: Real) -> None:
    pi = gated
    pi.headless.daemon.start()
    key = pi.start()["session_key"]
    build = pi.project / "build"
    build.mkdir()
    _asks(pi, key)
    # No reject option: roost answers "cancelled", and the extension blocks the command.
    assert pi.headless.post(f"/sessions/{key}/permission", {"option": "reject"}).status_code == 200
    denied = pi.headless.until(key, timeout=TURN_TIMEOUT, activity="idle")
    assert denied["activity_event"] == "end_turn"
    assert build.is_dir()
    _asks(pi, key)
    assert pi.headless.post(f"/sessions/{key}/permission", {"option": "allow"}).status_code == 200
    allowed = pi.headless.until(key, timeout=TURN_TIMEOUT, activity="idle")
    assert (allowed["activity_event"], allowed["recap"]) == ("end_turn", "RMRF-DONE")
    assert not build.exists()


def test_cancel_mid_turn(pi: Real) -> None:
    cancelled_mid_turn(pi)


def test_suspended_on_idle_and_resumed_by_a_prompt_with_the_history(pi: Real) -> None:
    # pi-acp's start takes longer than this idle timeout (3-9 s here, its session/new alone 2 s):
    # a session still starting is not idle, and the idle timer must leave it alone. Its
    # session/load replays the history as message chunks: none of it may become the recap.
    suspended_on_idle_and_resumed_with_the_history(pi)


def test_the_daemon_killed_mid_turn_comes_back_and_the_turn_completes(pi: Real) -> None:
    killed_daemon_mid_turn_comes_back(pi)
