"""``roost close``: every exit code, every refusal, what is typed, and the ``--json`` document.

The agents are the fake TUI, badged through the real hook; ``--log`` records every byte that
reached it, which is how these tests prove what close typed, and that a refusal typed nothing.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from pathlib import Path

import pytest

from tests.cli.roost.test_windows import fmt, panes
from tests.conftest import FAKE_AGENT, Roost


class Agent:
    """A fake agent in its own window beside a keeper window, so it is never a session's last pane."""

    def __init__(self, roost: Roost, *flags: str, name: str = "api", reply: str = "fake reply") -> None:
        self.roost = roost
        self.log = roost.root / f"{name}.log"
        self.log.touch()
        if not roost.tmux("list-sessions", check=False):
            roost.start("sh", window="keep")
        command = roost.fake_agent("--log", str(self.log), "--reply", reply, *flags)
        self.pane = roost.window(name, command)
        roost.wait_screen(self.pane, "fake agent ready")

    def type(self, text: str) -> None:
        self.roost.tmux("send-keys", "-t", self.pane, "-l", text)
        self.roost.tmux("send-keys", "-t", self.pane, "Enter")

    def turn(self, text: str = "hello", until: str = "done") -> None:
        self.type(text)
        self.roost.wait_for(lambda: self.state() == until, timeout=20, what=f"{self.pane} {until}")

    def state(self) -> str:
        return self.roost.option(self.pane, "@roost-state")

    def received(self) -> bytes:
        return self.log.read_bytes()

    def alive(self) -> bool:
        return self.pane in panes(self.roost)


def close(roost: Roost, *args: str):
    return roost.run("close", *args)


def test_close_types_the_exit_command_and_closes_the_pane(roost: Roost) -> None:
    agent = Agent(roost)
    agent.turn()
    proc = close(roost, agent.pane)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert agent.received().endswith(b"/exit\r")
    assert not agent.alive()
    assert "keep" in roost.tmux("list-windows", "-F", "#{window_name}")


def test_close_json_document(roost: Roost) -> None:
    agent = Agent(roost)
    agent.turn()
    doc = roost.json("close", "--json", agent.pane)
    assert doc == {
        "schema": 1,
        "command": "close",
        "target": agent.pane,
        "pane": agent.pane,
        "state": "done",
        "harness": "claude",
        "exit_command": "/exit",
        "forced": False,
        "worktree": None,
        "branch": None,
        "worktree_removed": False,
        "worktree_kept": None,
    }
    assert not agent.alive()


def test_close_by_a_one_pane_window_name_with_a_timeout(roost: Roost) -> None:
    agent = Agent(roost)
    agent.turn()
    doc = roost.json("close", "--json", "api", "30")
    assert doc["target"] == "api"
    assert doc["pane"] == agent.pane
    assert not agent.alive()


def test_close_of_an_agent_typed_at_a_shell_prompt_waits_for_the_shell(roost: Roost) -> None:
    roost.start("sh", window="keep")
    log = roost.root / "typed.log"
    pane = roost.window("api", "sh")
    roost.tmux("send-keys", "-t", pane, "-l", roost.fake_agent("--log", str(log)))
    roost.tmux("send-keys", "-t", pane, "Enter")
    roost.wait_screen(pane, "fake agent ready")
    roost.tmux("send-keys", "-t", pane, "-l", "hello")
    roost.tmux("send-keys", "-t", pane, "Enter")
    roost.wait_for(lambda: roost.option(pane, "@roost-state") == "done", timeout=20)
    doc = roost.json("close", "--json", pane)
    assert doc["exit_command"] == "/exit"
    assert log.read_bytes().endswith(b"/exit\r")
    assert pane not in panes(roost)


def test_working_is_refused_and_nothing_is_typed(roost: Roost) -> None:
    agent = Agent(roost, "--work", "60")
    agent.turn(until="working")
    before = agent.received()
    proc = close(roost, "--json", agent.pane)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert f"roost close: {agent.pane} is working" in proc.stderr
    assert "--force" in proc.stderr
    assert agent.alive()
    assert agent.received() == before


def test_force_closes_a_working_agent_without_typing(roost: Roost) -> None:
    agent = Agent(roost, "--work", "60")
    agent.turn(until="working")
    before = agent.received()
    doc = roost.json("close", "--force", "--json", agent.pane)
    assert doc["state"] == "working"
    assert doc["harness"] == "claude"
    assert doc["exit_command"] is None
    assert doc["forced"] is True
    assert not agent.alive()
    assert agent.received() == before


def test_blocked_is_refused_then_forced(roost: Roost) -> None:
    agent = Agent(roost, "--dialog-on", "deploy")
    agent.turn("deploy it", until="blocked")
    before = agent.received()
    proc = close(roost, agent.pane)
    assert proc.returncode == 1
    assert f"roost close: {agent.pane} needs input (a dialog for a person: " in proc.stderr
    assert "Bash: npm test" in proc.stderr
    assert agent.alive()
    assert agent.state() == "blocked"
    assert agent.received() == before
    doc = roost.json("close", "--json", "--force", agent.pane)
    assert (doc["state"], doc["exit_command"], doc["forced"]) == ("blocked", None, True)
    assert not agent.alive()
    assert agent.received() == before


def test_a_declined_dialog_is_not_blocked_any_more(roost: Roost) -> None:
    transcript = roost.root / "transcript.jsonl"
    transcript.touch()
    agent = Agent(roost, "--dialog-on", "deploy", "--transcript", str(transcript))
    agent.turn("deploy it", until="blocked")
    roost.tmux("send-keys", "-t", agent.pane, "Escape")
    roost.wait_screen(agent.pane, "declined")
    roost.wait_for(lambda: transcript.stat().st_size > 0, what="the decline in the transcript")
    # The dialog's record is whole seconds; make the transcript plainly newer than it.
    opened = _dialog_opened(roost, agent.pane)
    roost.wait_for(lambda: time.time() > opened + 1.5, what="a second past the dialog")
    os.utime(transcript)
    doc = roost.json("close", "--json", agent.pane)
    assert (doc["state"], doc["exit_command"]) == ("blocked", "/exit")
    assert agent.received().endswith(b"/exit\r")
    assert not agent.alive()


def _dialog_opened(roost: Roost, pane: str) -> float:
    return float(roost.option(pane, "@roost-transcript").split(" ")[0])


def test_a_window_with_two_panes_is_refused_even_forced(roost: Roost) -> None:
    agent = Agent(roost)
    agent.turn()
    helper = roost.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", agent.pane, "sleep 600").strip()
    for args in (("api",), ("--force", "api")):
        proc = close(roost, *args)
        assert proc.returncode == 1, args
        assert "window 'api' has 2 panes" in proc.stderr
        assert "%N" in proc.stderr
    assert agent.alive()
    assert helper in panes(roost)
    assert b"/exit" not in agent.received()


def test_the_last_pane_of_a_session_is_refused_even_forced(roost: Roost) -> None:
    pane = roost.start("sleep 600", session="solo")
    for args in ((pane,), ("--force", pane), ("--force", "--json", pane)):
        proc = close(roost, *args)
        assert proc.returncode == 1, args
        assert proc.stdout == ""
        assert f"{pane} is the last pane of session 'solo'" in proc.stderr
        assert "roost kill solo" in proc.stderr
    assert pane in panes(roost)


def test_unknown_harness_is_refused_then_forced(roost: Roost) -> None:
    agent = Agent(roost, "--no-hooks")
    roost.tmux("set-option", "-p", "-t", agent.pane, "@roost-state", "done")
    roost.tmux("set-option", "-p", "-t", agent.pane, "@roost-harness", "mytool")
    proc = close(roost, agent.pane)
    assert proc.returncode == 1
    assert "harness 'mytool' has no exit command" in proc.stderr
    assert agent.alive()
    assert agent.received() == b""
    doc = roost.json("close", "--force", "--json", agent.pane)
    assert (doc["harness"], doc["exit_command"], doc["forced"]) == ("mytool", None, True)
    assert not agent.alive()


def test_an_agent_roost_cannot_name_is_refused(roost: Roost) -> None:
    agent = Agent(roost, "--no-hooks")
    roost.tmux("set-option", "-p", "-t", agent.pane, "@roost-state", "done")
    proc = close(roost, agent.pane)
    assert proc.returncode == 1
    assert "can't tell which agent runs there" in proc.stderr
    assert agent.alive()
    assert agent.received() == b""


def test_the_harness_is_found_from_the_command_when_not_recorded(roost: Roost) -> None:
    roost.start("sh", window="keep")
    # A process is named after the file it was started from: a link called claude is "claude".
    claude = roost.root / "claude"
    claude.symlink_to(sys.executable)
    log = roost.root / "claude.log"
    pane = roost.window("api", shlex.join([str(claude), str(FAKE_AGENT), "--log", str(log), "--no-hooks"]))
    roost.wait_screen(pane, "fake agent ready")
    roost.tmux("set-option", "-p", "-t", pane, "@roost-state", "done")
    assert "claude" in _group_names(pane, roost)
    doc = roost.json("close", "--json", pane)
    assert (doc["harness"], doc["exit_command"]) == ("claude", "/exit")
    assert log.read_bytes().endswith(b"/exit\r")
    assert pane not in panes(roost)


def _group_names(pane: str, roost: Roost) -> list[str]:
    from roost.pane.state import jobs

    pgid = jobs.foreground_job(int(fmt(roost, pane, "#{pane_pid}")))
    return jobs.job_commands(pgid) if pgid else []


def test_a_pane_with_no_badge_is_closed_without_typing(roost: Roost) -> None:
    roost.start("sh", window="keep")
    log = roost.root / "plain.log"
    pane = roost.window("tail", roost.fake_agent("--log", str(log), "--no-hooks"))
    roost.wait_screen(pane, "fake agent ready")
    doc = roost.json("close", "--json", pane)
    assert doc == {
        "schema": 1,
        "command": "close",
        "target": pane,
        "pane": pane,
        "state": None,
        "harness": None,
        "exit_command": None,
        "forced": False,
        "worktree": None,
        "branch": None,
        "worktree_removed": False,
        "worktree_kept": None,
    }
    assert pane not in panes(roost)
    assert log.read_bytes() == b""


def test_only_a_shell_left_under_an_old_badge_is_closed_without_typing(roost: Roost) -> None:
    roost.start("sh", window="keep")
    pane = roost.window("api", "sh")
    roost.tmux("set-option", "-p", "-t", pane, "@roost-state", "working")
    roost.tmux("set-option", "-p", "-t", pane, "@roost-harness", "claude")
    roost.wait_for(lambda: fmt(roost, pane, "#{pane_current_command}") == "sh")
    doc = roost.json("close", "--json", pane)
    assert (doc["state"], doc["harness"], doc["exit_command"]) == ("working", "claude", None)
    assert pane not in panes(roost)


def test_a_dialog_while_exiting_stops_close_and_leaves_the_pane(roost: Roost) -> None:
    agent = Agent(roost, "--exit-dialog")
    agent.turn()
    proc = close(roost, "--json", agent.pane, "20")
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "opened a dialog while exiting (Background work is still running)" in proc.stderr
    assert agent.alive()
    assert agent.state() == "blocked"
    assert agent.received().endswith(b"/exit\r")


def test_an_agent_that_ignores_the_exit_command_times_out(roost: Roost) -> None:
    agent = Agent(roost, "--exit-command", "/quit")
    agent.turn()
    proc = close(roost, agent.pane, "2")
    assert proc.returncode == 1
    assert f"{agent.pane} did not exit within 2 s; the pane is still open" in proc.stderr
    assert agent.alive()
    assert b"/exit\r" in agent.received()


def test_a_gone_target_exits_2_with_one_line(roost: Roost) -> None:
    roost.start("sh")
    for args in (("%999",), ("--json", "%999"), ("--force", "nowhere")):
        proc = close(roost, *args)
        assert proc.returncode == 2, args
        assert proc.stdout == ""
        assert proc.stderr.count("\n") == 1
        assert proc.stderr.startswith("roost close: ")


def test_no_server_is_gone(roost: Roost) -> None:
    proc = close(roost, "%1")
    assert proc.returncode == 2
    assert proc.stdout == ""


@pytest.mark.parametrize(
    "args",
    [(), ("--json",), ("%1", "abc"), ("%1", "-5"), ("%1", "--force"), ("%1", "5", "x"), ("--bogus", "%1")],
)
def test_usage_errors(roost: Roost, args: tuple[str, ...]) -> None:
    roost.start("sh")
    proc = close(roost, *args)
    assert proc.returncode == 1
    assert proc.stderr.startswith("usage: roost close"), proc.stderr
    assert proc.stdout == ""


def test_kept_replies_survive_close(roost: Roost) -> None:
    agent = Agent(roost, reply="the kept answer")
    agent.turn()
    key = roost.tmux("display-message", "-p", "#{start_time}-#{pid}").strip()
    kept = Path(roost.env["XDG_STATE_HOME"]) / "roost" / "panes" / key / agent.pane.lstrip("%") / "replies"
    assert (kept / "000001").read_text() == "the kept answer"
    assert roost.run("close", agent.pane).returncode == 0
    assert not agent.alive()
    assert (kept / "000001").read_text() == "the kept answer"
    proc = roost.run("read", agent.pane)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "the kept answer"
    doc = roost.json("read", "--json", agent.pane)
    assert (doc["pane"], doc["source"], doc["turn"], doc["state"]) == (agent.pane, "reply", 1, None)
    assert doc["text"] == "the kept answer"
    assert roost.run("read", "%999").returncode == 2
