"""Closing a session through rosterd, in both lanes: ``POST /sessions/{key}/close`` and ``rosterd
close`` on a real tmux server and a real daemon.

A pane's agent is the fake TUI in its own window beside a keeper (so it is never a session's
last pane), its input logged: the log proves what close typed, and that a refusal typed
nothing; a refused close leaves the pane open. A headless session is the fake ACP adapter's.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.api.helpers import about, sleeper
from tests.cli.roost.test_windows import panes
from tests.conftest import BIN, Roost
from tests.contracts.tables import names, table
from tests.daemon.fixture import Daemon, daemon
from tests.runner.conftest import Headless, headless

__all__ = ["daemon", "headless"]

GENEROUS = 20.0
FIELDS = ["record", "pane", "state", "harness", "exit_command", "forced"]


class Agent:
    """A fake agent (seen by the scan as Claude Code) in a window of its own beside a keeper."""

    def __init__(self, roost: Roost, *flags: str, name: str = "agent") -> None:
        self.roost = roost
        self.log = roost.root / f"{name}.log"
        self.log.touch()
        if not roost.tmux("list-sessions", check=False):
            roost.start("sleep 600", window="keep")
        command = f"ROOST_AGENT=claude {roost.fake_agent('--log', str(self.log), *flags)}"
        self.pane = roost.window(name, command)
        roost.wait_screen(self.pane, "fake agent ready", GENEROUS)

    def turn(self, text: str = "hello", until: str = "done") -> None:
        self.roost.tmux("send-keys", "-t", self.pane, "-l", text)
        self.roost.tmux("send-keys", "-t", self.pane, "Enter")
        self.roost.wait_for(lambda: self.state() == until, GENEROUS, f"{self.pane} {until}")

    def state(self) -> str:
        return self.roost.option(self.pane, "@roost-state")

    def received(self) -> bytes:
        return self.log.read_bytes()

    def alive(self) -> bool:
        return self.pane in panes(self.roost)

    def key(self, running: Daemon) -> str:
        """The session key of the agent in the pane, once the daemon has seen it."""

        def seen() -> dict[str, Any] | None:
            return running.record_where(
                lambda r: (r.get("tmux") or {}).get("pane") == self.pane and r["liveness"] != "ended"
            )

        return str(running.wait_for(seen, GENEROUS, f"a record of {self.pane}")["session_key"])


def close(running: Daemon, key: str, body: dict[str, Any] | None = None) -> httpx.Response:
    with running.unix(timeout=60) as client:
        return client.post(f"/sessions/{quote(key, safe='')}/close", json={} if body is None else body)


def rosterd(running: Daemon, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "rosterd"), *args], capture_output=True, text=True, env=running.env, timeout=60
    )


def test_a_pane_session_is_asked_to_leave_and_its_pane_closed(roost: Roost, daemon: Daemon) -> None:
    daemon.start()
    agent = Agent(roost)
    agent.turn()
    key = agent.key(daemon)
    answer = close(daemon, key)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert list(body) == FIELDS
    assert body["record"]["session_key"] == key
    assert (body["pane"], body["state"], body["harness"]) == (agent.pane, "done", "claude")
    assert (body["exit_command"], body["forced"]) == ("/exit", False)
    assert agent.received().endswith(b"/exit\r")
    assert not agent.alive()
    assert "keep" in roost.tmux("list-windows", "-F", "#{window_name}")
    daemon.wait_for(lambda: daemon.get(f"/sessions/{key}")["liveness"] == "ended", GENEROUS, "the end")


def test_force_closes_a_working_agents_pane_by_its_id_without_typing(roost: Roost, daemon: Daemon) -> None:
    daemon.start()
    agent = Agent(roost, "--work", "60")
    agent.turn(until="working")
    before = agent.received()
    answer = close(daemon, agent.pane, {"force": True})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["pane"], body["state"], body["exit_command"], body["forced"]) == (
        agent.pane,
        "working",
        None,
        True,
    )
    assert not agent.alive()
    assert agent.received() == before


def refused(running: Daemon, agent: Agent, body: dict[str, Any], status: int, words: str) -> dict[str, Any]:
    """A close refused as ``status`` with ``words``: the pane open, nothing typed."""
    before = agent.received()
    answer = close(running, agent.pane, body)
    assert answer.status_code == status, answer.text
    assert words in answer.json()["error"], answer.text
    assert agent.alive()
    assert agent.received() == before
    return dict(answer.json())


def test_what_close_refuses_it_refuses_before_typing_or_closing(roost: Roost, daemon: Daemon) -> None:
    daemon.start()
    working = Agent(roost, "--work", "60", name="working")
    working.turn(until="working")
    refused(daemon, working, {}, 409, f"{working.pane} is working")
    blocked = Agent(roost, "--dialog-on", "deploy", name="blocked")
    blocked.turn("deploy it", until="blocked")
    refused(daemon, blocked, {}, 409, f"{blocked.pane} needs input (a dialog for a person: Bash: npm test)")
    unknown = Agent(roost, "--no-hooks", name="unknown")
    roost.tmux("set-option", "-p", "-t", unknown.pane, "@roost-state", "done")
    roost.tmux("set-option", "-p", "-t", unknown.pane, "@roost-harness", "mytool")
    refused(daemon, unknown, {}, 409, "harness 'mytool' has no exit command")
    for body in ({"force": "yes"}, {"timeout_s": 301}, {"timeout_s": -1}, {"bogus": 1}, {"timeout_s": 1.5}):
        refused(daemon, working, body, 400, "")


def test_the_last_pane_of_a_tmux_session_is_refused_even_forced(roost: Roost, daemon: Daemon) -> None:
    daemon.start()
    pane = roost.start("sleep 600", session="solo")
    for body in ({}, {"force": True}):
        answer = close(daemon, pane, body)
        assert answer.status_code == 409, answer.text
        assert f"{pane} is the last pane of session 'solo'" in answer.json()["error"]
    assert pane in panes(roost)


def test_an_agent_that_does_not_leave_in_time_is_a_504(roost: Roost, daemon: Daemon) -> None:
    daemon.start()
    agent = Agent(roost, "--exit-command", "/quit")
    agent.turn()
    answer = close(daemon, agent.pane, {"timeout_s": 1})
    assert answer.status_code == 504, answer.text
    assert answer.json()["error"] == f"{agent.pane} did not exit within 1 s; the pane is still open"
    assert agent.alive()
    assert agent.received().endswith(b"/exit\r")


def test_what_is_no_pane_and_no_headless_session_is_not_closed(roost: Roost, daemon: Daemon) -> None:
    daemon.start()
    roost.start("sleep 600")
    with sleeper() as proc, daemon.unix() as client:
        claimed = client.post("/claim", json=about(proc, activity="working"))
        assert claimed.status_code == 200, claimed.text
        answer = close(daemon, claimed.json()["session_key"], {"force": True})
        assert answer.status_code == 409, answer.text
        assert answer.json()["code"] == "not_closable"
        assert proc.poll() is None
    for key in ("%999", "no-such-session"):
        assert close(daemon, key).status_code == 404


def test_a_headless_session_ends_as_stop_ends_it(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start(name="closing")["session_key"]
    answer = close(headless.daemon, key)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["record"]["liveness"], body["record"]["ended_reason"]) == ("ended", "exit")
    assert [body[name] for name in FIELDS[1:]] == [None, None, None, None, False]
    assert headless.holder_pids() == []


def test_rosterd_close_prints_what_it_did_and_refuses_with_exit_1(roost: Roost, daemon: Daemon) -> None:
    daemon.start()
    agent = Agent(roost)
    agent.turn()
    key = agent.key(daemon)
    working = Agent(roost, "--work", "60", name="working")
    working.turn(until="working")
    proc = rosterd(daemon, "close", working.pane)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.startswith(f"rosterd close: {working.pane} is working")
    assert working.alive()
    for args in (("close",), ("close", key, "--timeout", "soon"), ("close", key, "--timeout", "301")):
        proc = rosterd(daemon, *args)
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr.startswith(("usage: rosterd close", "rosterd close: --timeout")), proc.stderr
    assert agent.alive()
    proc = rosterd(daemon, "close", key, "--timeout", "20")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{key}: closed (pane {agent.pane}, typed '/exit')\n"
    assert not agent.alive()
    proc = rosterd(daemon, "close", "--force", "--json", working.pane)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    row = next(row for row in table("`rosterd --json` documents") if row["document"].startswith("close "))
    assert list(doc) == names(row["fields"])
    assert (doc["pane"], doc["forced"]) == (working.pane, True)
    assert not working.alive()


@pytest.mark.parametrize("args", [("close", "%1"), ("close", "--force", "x")])
def test_rosterd_close_with_no_daemon_exits_2(roost: Roost, args: tuple[str, ...]) -> None:
    proc = subprocess.run([str(BIN / "rosterd"), *args], capture_output=True, text=True, env=roost.env)
    assert proc.returncode == 2, proc.stderr
