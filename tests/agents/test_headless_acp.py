"""Headless sessions over the real ACP adapters from npm, offline against the fake model APIs.

``@agentclientprotocol/claude-agent-acp`` (which bundles its own Claude Code) and
``@agentclientprotocol/codex-acp`` (which bundles its own codex) run under real holders started
by a real daemon. Each test walks one capability for both: a turn, permissions allowed, always
allowed and denied, a cancel, suspend and resume with the history, a daemon killed mid-turn.
The test environment has ``IS_SANDBOX=yes`` and runs as root on CI: Claude's adapter fails every
``session/new`` under that unless the runner drops it, so every Claude test proves it does.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.agents.conftest import API_KEY, CLAUDE_QUIET, TIMINGS, TURN_TIMEOUT, _integrate
from tests.conftest import BIN, Roost
from tests.daemon.fixture import Daemon, daemon
from tests.fakes.model_api import ModelAPI, reply_for
from tests.mcpserver.client import refused, unix
from tests.runner.conftest import Headless, end_holders, power_cut
from tests.web.conftest import Web, chromium, page

__all__ = ["chromium", "daemon", "page"]

NODE = "/usr/bin/node"
"""Debian's node 20: claude-agent-acp 0.49.0 is the last release that runs on it."""


@dataclass
class Real:
    """One adapter's headless sessions: the daemon, the fake API, the project folder."""

    harness: str
    headless: Headless
    api: ModelAPI
    project: Path
    env: dict[str, str]

    def start(self, **body: Any) -> dict[str, Any]:
        began = time.monotonic()
        answer = self.headless.post(
            "/sessions",
            {"harness": self.harness, "cwd": str(self.project), "env": self.env, **body},
            timeout=90,
        )
        assert answer.status_code == 201, answer.text
        TIMINGS.append(f"{self.harness}-acp: start to idle {time.monotonic() - began:.2f} s")
        return answer.json()["record"]

    def prompt(self, key: str, text: str, **body: Any) -> dict[str, Any]:
        answer = self.headless.prompt(key, text, timeout_s=TURN_TIMEOUT, **body)
        assert answer.status_code == 200, answer.text
        return answer.json()

    def turn(self, key: str, text: str) -> dict[str, Any]:
        body = self.prompt(key, text, wait="idle")
        assert body["wait"]["reached"], body
        return body["record"]


def _claude_home(home: Path, project: Path) -> None:
    (home / ".claude.json").write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
                "projects": {str(project): {"hasTrustDialogAccepted": True}},
            }
        )
    )
    (home / ".claude").mkdir(exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"defaultMode": "default"}}))


def _codex_home(home: Path, project: Path, url: str) -> None:
    (home / ".codex").mkdir(exist_ok=True)
    (home / ".codex" / "config.toml").write_text(
        f"""model = "gpt-5.5"
model_provider = "fake"
check_for_update_on_startup = false

[analytics]
enabled = false

[features]
plugins = false

[model_providers.fake]
name = "Fake"
base_url = "{url}/v1"
wire_api = "responses"

[projects."{project}"]
trust_level = "trusted"
"""
    )


@pytest.fixture(params=["claude", "codex"])
def real(
    request: pytest.FixtureRequest,
    roost: Roost,
    daemon: Daemon,
    agent_bin: Path,
    anthropic_api,
    responses_api,
) -> Iterator[Real]:
    harness = request.param
    home = Path(roost.env["HOME"])
    project = (roost.root / "project").resolve()
    project.mkdir()
    if harness == "claude":
        api: ModelAPI = anthropic_api
        _claude_home(home, project)
        env = {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": API_KEY, **CLAUDE_QUIET}
    else:
        api = responses_api
        _codex_home(home, project, api.url)
        env = {"INITIAL_AGENT_MODE": "workspace-write"}  # the mode in which codex asks permission
    assert roost.env.get("IS_SANDBOX", "yes") != "1"
    roost.env.setdefault("IS_SANDBOX", "yes")
    adapter = {"claude": "claude-agent-acp", "codex": "codex-acp"}[harness]
    daemon.settings[f"harness.{harness}"] = {"adapter": f"{NODE} {agent_bin}/{adapter}"}
    daemon.settings["runner"] = {"idle_timeout_s": 600}
    headless = Headless(daemon, roost.root)
    found = Real(harness, headless, api, project, env)
    yield found
    if daemon.proc is not None and daemon.proc.poll() is None:
        daemon.stop()
    end_holders(headless)


def test_a_headless_turn_reads_idle_with_the_reply_as_recap(real: Real) -> None:
    real.headless.daemon.start()
    began = time.monotonic()
    record = real.start(name=f"tests: {real.harness}")
    key = record["session_key"]
    assert (record["lane"], record["liveness"], record["activity"]) == ("headless", "live", "idle")
    assert record["session_id"]
    done = real.turn(key, "hello there")
    TIMINGS.append(f"{real.harness}-acp: start to first turn done {time.monotonic() - began:.2f} s")
    assert (done["activity"], done["activity_event"]) == ("idle", "end_turn")
    assert done["recap"] == reply_for("hello there")
    assert done["usage"]["tokens"]["totalTokens"] > 0
    assert done["sources"][:2] == ["launcher", "acp"]
    # The harness under the adapter (Claude's bundled CLI, codex's app-server) is seen by the
    # process scan and nests into the headless session: one row, not two.
    time.sleep(0.5)
    live = [r for r in real.headless.daemon.snapshot()["records"] if r["liveness"] != "ended"]
    assert [r["session_key"] for r in live] == [key]
    stopped = real.headless.post(f"/sessions/{key}/stop", timeout=30)
    assert stopped.json()["record"]["ended_reason"] == "exit"
    assert real.headless.holder_pids() == []


def _asks(real: Real, key: str, text: str) -> dict[str, Any]:
    body = real.prompt(key, text, wait="needs_attention")
    assert body["wait"]["reached"], body
    pending = body["record"]["pending"]
    assert "touch x" in pending["summary"]
    assert {o["kind"] for o in pending["options"]} >= {"allow_once", "allow_always", "reject_once"}
    return pending


def test_a_permission_denied_allowed_and_always_allowed(real: Real) -> None:
    real.headless.daemon.start()
    key = real.start()["session_key"]
    target = real.project / "x"
    _asks(real, key, "TOOL one")
    assert real.headless.post(f"/sessions/{key}/permission", {"option": "reject"}).status_code == 200
    denied = real.headless.until(key, timeout=TURN_TIMEOUT, activity="idle")
    assert denied["activity_event"] in ("end_turn", "cancelled")  # Claude lets the model go on; codex stops
    assert not target.exists()
    _asks(real, key, "TOOL two")
    allowed = subprocess.run(  # the CLI, as a person at a shell answers
        [str(BIN / "rosterd"), "allow", key],
        capture_output=True,
        text=True,
        env=real.headless.daemon.env,
        timeout=30,
    )
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout.startswith(f"{key}: allowed;")
    assert real.headless.until(key, timeout=TURN_TIMEOUT, activity="idle")["activity_event"] == "end_turn"
    assert target.exists()
    target.unlink()
    _asks(real, key, "TOOL three")
    # Another agent over MCP may not give "always": that is a person's answer by default.
    nope = refused(unix(real.headless.daemon), "session.allow", name=key, always=True)
    assert (nope["status"], nope["code"]) == (409, "allow_always_off"), nope
    always = real.headless.post(f"/sessions/{key}/permission", {"option": "allow_always"})
    assert always.status_code == 200, always.text
    assert always.json()["record"]["activity_event"] == "permission_answered"
    real.headless.until(key, timeout=TURN_TIMEOUT, activity="idle")
    assert target.exists()
    target.unlink()
    again = real.turn(key, "TOOL four")  # always allowed: the adapter asks no more
    assert again["pending"] is None
    assert target.exists()


def test_cancel_mid_turn(real: Real) -> None:
    cancelled_mid_turn(real)


def cancelled_mid_turn(real: Real) -> None:
    """A slow turn cancelled: idle as ``cancelled``, and the next turn answers. Shared with pi's tests."""
    real.headless.daemon.start()
    key = real.start()["session_key"]
    real.prompt(key, "SLOW please")
    real.headless.until(key, activity="active")
    began = time.monotonic()
    assert real.headless.post(f"/sessions/{key}/cancel").status_code == 200
    done = real.headless.until(key, timeout=TURN_TIMEOUT, activity="idle")
    assert done["activity_event"] == "cancelled"
    TIMINGS.append(f"{real.harness}-acp: cancel to idle {time.monotonic() - began:.2f} s")
    assert real.turn(key, "after the cancel")["recap"] == reply_for("after the cancel")


def transcript_keeps(real: Real, session_id: str, text: str) -> None:
    """Wait until a file of the harness's named for the session holds ``text`` (Claude's
    ``~/.claude/projects/…/ID.jsonl``, codex's ``~/.codex/sessions/…/rollout-…-ID.jsonl``). The
    harness writes it as the turn ends, not before the turn's answer: a holder lost within that
    moment loses the turn (``session/load`` then finds nothing)."""
    home = Path(real.headless.daemon.env["HOME"])

    def holds() -> bool:
        for path in home.rglob(f"*{session_id}*"):
            with contextlib.suppress(OSError):
                if path.is_file() and text in path.read_text(errors="replace"):
                    return True
        return False

    real.headless.daemon.wait_for(holds, timeout=TURN_TIMEOUT, what="the harness's transcript of the turn")


def _said_before(api: ModelAPI, text: str) -> bool:
    return text in json.dumps(api.requests[-1].body)


def suspended_on_idle_and_resumed_with_the_history(real: Real) -> None:
    """Idle past a 2 s timeout, then prompted: the session loads its history in a new holder.
    Shared with pi's tests (tests/agents/test_headless_pi.py)."""
    real.headless.daemon.settings["runner"] = {"idle_timeout_s": 2}
    real.headless.daemon.start()
    first = real.start()
    key = first["session_key"]
    real.turn(key, "the first words")
    real.headless.until(key, timeout=15, liveness="suspended")
    assert real.headless.holder_pids() == []
    began = time.monotonic()
    done = real.turn(key, "the second words")
    TIMINGS.append(f"{real.harness}-acp: resume and a turn {time.monotonic() - began:.2f} s")
    assert done["recap"] == reply_for("the second words")
    assert (done["session_key"], done["session_id"], done["liveness"]) == (key, first["session_id"], "live")
    assert _said_before(real.api, "the first words")  # the adapter loaded the history


def test_suspended_on_idle_and_resumed_by_a_prompt_with_the_history(real: Real) -> None:
    suspended_on_idle_and_resumed_with_the_history(real)


def killed_daemon_mid_turn_comes_back(real: Real) -> None:
    """kill -9 of the daemon mid-turn: rebuilt in under a second, and the turn completes.
    Shared with pi's tests."""
    real.headless.daemon.start()
    key = real.start()["session_key"]
    real.prompt(key, "SLOW and steady")
    real.headless.until(key, activity="active")
    real.headless.daemon.stop(signal.SIGKILL)
    real.headless.daemon.start()
    rebuilt = real.headless.daemon.get("/status")["rebuild"]["headless"]
    assert rebuilt["sessions"] == 1 and rebuilt["ms"] < 1000
    TIMINGS.append(f"{real.harness}-acp: daemon rebuild {rebuilt['ms']} ms")
    done = real.headless.until(key, timeout=TURN_TIMEOUT, activity="idle")
    assert (done["activity_event"], done["recap"]) == ("end_turn", reply_for("SLOW and steady"))
    real.headless.post(f"/sessions/{key}/stop", timeout=30)
    end_holders(real.headless)


def test_the_daemon_killed_mid_turn_comes_back_and_the_turn_completes(real: Real) -> None:
    killed_daemon_mid_turn_comes_back(real)


def test_a_killed_holder_is_resumed_once_under_a_new_key_with_the_history(real: Real) -> None:
    real.headless.daemon.start()
    first = real.start()
    key = first["session_key"]
    real.turn(key, "words before the crash")
    transcript_keeps(real, first["session_id"], "words before the crash")  # then crash
    os.kill(first["pid"], signal.SIGKILL)
    assert real.headless.until(key, timeout=TURN_TIMEOUT, liveness="ended")["ended_reason"] == "crash"

    def resumed() -> dict[str, Any] | None:
        records = real.headless.daemon.snapshot()["records"]
        return next(
            (r for r in records if r["session_key"] != key and r["activity_event"] == "resumed_after_crash"),
            None,
        )

    again = real.headless.daemon.wait_for(resumed, timeout=TURN_TIMEOUT, what="the resumed session")
    assert again["session_id"] == first["session_id"]
    done = real.turn(again["session_key"], "words after the crash")
    assert done["recap"] == reply_for("words after the crash")
    assert _said_before(real.api, "words before the crash")
    # A second crash within five minutes is not resumed: the session ends, and its whole tree with it.
    adapter = done["holder"]["adapter_pid"]
    os.kill(done["pid"], signal.SIGKILL)
    second = real.headless.until(again["session_key"], timeout=TURN_TIMEOUT, liveness="ended")
    assert second["ended_reason"] == "crash"
    time.sleep(2)
    live = [r for r in real.headless.daemon.snapshot()["records"] if r["liveness"] != "ended"]
    assert live == []
    assert real.headless.holder_pids() == []
    real.headless.daemon.wait_for(
        lambda: not _tree_alive(adapter), timeout=10, what="the adapter's tree ended"
    )


def _tree_alive(pid: int) -> bool:
    try:
        proc = psutil.Process(pid)
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def test_after_a_reboot_each_session_is_suspended_until_a_prompt_loads_its_history(real: Real) -> None:
    """The machine goes down mid-life: holders, adapters and the runtime directory are gone, the
    runner's own files are left. Every session comes back suspended, none resumes by itself,
    and the first prompt loads the history into a new holder."""
    real.headless.daemon.start()
    first = real.start(name=f"tests: {real.harness} boot")
    key = first["session_key"]
    real.turn(key, "words before the reboot")
    transcript_keeps(real, first["session_id"], "words before the reboot")
    power_cut(real.headless)  # the machine goes down: every holder and adapter with it
    shutil.rmtree(real.headless.daemon.runtime / "roost")  # a reboot empties the runtime directory
    real.headless.daemon.start()
    record = real.headless.record(key)
    assert (record["liveness"], record["holder"], record["session_id"]) == (
        "suspended",
        None,
        first["session_id"],
    )
    assert record["name"] == f"tests: {real.harness} boot"
    time.sleep(1.5)  # nothing resumes by itself
    assert real.headless.holder_pids() == []
    done = real.turn(key, "words after the reboot")
    assert (done["liveness"], done["recap"]) == ("live", reply_for("words after the reboot"))
    assert _said_before(real.api, "words before the reboot")
    real.headless.post(f"/sessions/{key}/stop", timeout=30)


@pytest.mark.parametrize("real", ["claude"], indirect=True)  # codex-acp's app-server runs no hooks
def test_the_harness_hooks_report_into_the_headless_session_and_acp_wins(real: Real) -> None:
    _integrate(real.headless.daemon.roost, "claude")
    real.headless.daemon.start()
    key = real.start()["session_key"]
    real.turn(key, "hello hooks")

    def hooked() -> dict[str, Any] | None:
        view = real.headless.daemon.get(f"/sessions/{key}/explain")
        return view if "hook" in view["sources"] else None

    view = real.headless.daemon.wait_for(hooked, timeout=TURN_TIMEOUT, what="a hook claim in the session")
    assert view["fields"]["activity"]["source"] == "acp"
    assert "hook" in {entry["source"] for entry in view["shadowed"].get("activity", [])}
    live = [r for r in real.headless.daemon.snapshot()["records"] if r["liveness"] != "ended"]
    assert [r["session_key"] for r in live] == [key]


@pytest.mark.parametrize("real", ["claude"], indirect=True)
def test_the_web_apps_deny_refuses_the_tool(real: Real, page: Any) -> None:
    """A real headless session's request on its sidebar row: Deny there is the adapter's reject."""
    real.headless.daemon.start()
    key = real.start(name="web answers")["session_key"]
    web = Web(real.headless.daemon, real.headless.daemon.roost)
    page.goto(web.new_link())
    _asks(real, key, "TOOL from the web")
    request = f'li.session[data-session="{key}"] .request'
    page.wait_for_selector(f'{request} button[data-answer="reject"]')
    assert page.locator(f"{request} button").all_inner_texts() == ["Allow", "Always allow", "Deny"]
    page.click(f'{request} button[data-answer="reject"]')
    done = real.headless.until(key, timeout=TURN_TIMEOUT, activity="idle")
    assert done["pending"] is None
    page.wait_for_selector(request, state="detached")
    assert not (real.project / "x").exists()
