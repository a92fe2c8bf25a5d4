"""``roost forget TARGET | --gone | --all``: which kept replies go, and when the log goes too."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli.roost.inpane import Shell


def records(roost) -> Path:
    return roost.root / "state" / "roost" / "panes"


def key(roost) -> str:
    return roost.tmux("display-message", "-p", "#{start_time}-#{pid}").strip()


def keep_reply(shell: Shell, text: str) -> Path:
    """A finished turn with a kept reply; returns the pane's kept-replies directory."""
    shell.run("state", "working")
    shell.run("reply", text)
    shell.run("state", "done")
    pane_dir = records(shell.roost) / key(shell.roost) / shell.pane.lstrip("%")
    assert (pane_dir / "replies" / "000001").read_text() == text
    return pane_dir


def log_lines(roost) -> list[dict]:
    return [json.loads(x) for x in roost.run("events").stdout.splitlines()]


def test_forget_target_removes_only_that_panes_replies(roost):
    a, b = Shell.open(roost, "a"), Shell.open(roost, "b")
    a_dir, b_dir = keep_reply(a, "answer a"), keep_reply(b, "answer b")
    before = log_lines(roost)
    proc = roost.run("forget", a.pane)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert not a_dir.exists()
    assert (b_dir / "replies" / "000001").exists()
    assert log_lines(roost) == before  # the log is not touched


def test_forget_a_window_name(roost):
    a = Shell.open(roost, "api")
    a_dir = keep_reply(a, "answer")
    assert roost.run("forget", "api").returncode == 0
    assert not a_dir.exists()


def test_forget_a_pane_with_nothing_kept_is_fine(roost):
    shell = Shell.open(roost)
    assert roost.run("forget", shell.pane).returncode == 0


def test_forget_a_gone_target_exits_2(roost):
    Shell.open(roost)
    for target in ("%999", "nosuchwindow"):
        proc = roost.run("forget", target)
        assert (proc.returncode, proc.stdout) == (2, "")
        assert proc.stderr.startswith("roost forget: can't find")


def test_forget_target_without_server_exits_2(roost):
    proc = roost.run("forget", "%1")
    assert proc.returncode == 2
    assert "no roost server" in proc.stderr


def test_forget_gone_removes_closed_panes_and_stopped_servers(roost):
    live, dead = Shell.open(roost, "live"), Shell.open(roost, "dead")
    live_dir, dead_dir = keep_reply(live, "still here"), keep_reply(dead, "gone soon")
    stopped = records(roost) / "1000-1" / "3" / "replies"
    stopped.mkdir(parents=True)
    (stopped / "000001").write_text("from a server that stopped")
    roost.tmux("kill-pane", "-t", dead.pane)
    before = roost.wait_for(
        lambda: (lambda lines: lines if lines[-1]["event"] == "closed" else None)(log_lines(roost)),
        what="the closed line",
    )
    proc = roost.run("forget", "--gone")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert (live_dir / "replies" / "000001").exists()
    assert not dead_dir.exists()
    assert not (records(roost) / "1000-1").exists()
    assert log_lines(roost) == before


def test_forget_gone_without_server_removes_every_kept_reply(roost):
    shell = Shell.open(roost)
    pane_dir = keep_reply(shell, "answer")
    roost.tmux("kill-server")
    assert roost.run("forget", "--gone").returncode == 0
    assert not pane_dir.exists()
    assert not pane_dir.parent.exists()


def test_forget_all_removes_replies_and_clears_the_log(roost):
    a, b = Shell.open(roost, "a"), Shell.open(roost, "b")
    a_dir, b_dir = keep_reply(a, "answer a"), keep_reply(b, "answer b")
    cursor = log_lines(roost)[0]["cursor"]
    proc = roost.run("forget", "--all")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert not a_dir.exists() and not b_dir.exists()
    assert log_lines(roost) == []
    assert roost.run("events", "--since", cursor).returncode == 3
    a.run("state", "working")  # the log starts again, with new cursors
    assert [x["to"] for x in log_lines(roost)] == ["working"]


def test_forget_all_clears_a_moved_log(roost, tmp_path):
    roost.env["ROOST_EVENTS"] = str(tmp_path / "ev")
    shell = Shell.open(roost)
    shell.run("state", "working")
    assert log_lines(roost)
    assert roost.run("forget", "--all").returncode == 0
    assert log_lines(roost) == []


def test_forget_all_with_records_and_log_off(roost):
    roost.env.update(ROOST_RECORD_DIR="", ROOST_EVENTS="")
    Shell.open(roost)
    assert roost.run("forget", "--all").returncode == 0


@pytest.mark.parametrize("args", [(), ("%1", "%2"), ("--everything",), ("--gone", "%1")])
def test_forget_usage_exits_1(roost, args):
    proc = roost.run("forget", *args)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.startswith("usage: roost forget")


def test_forget_gone_leaves_another_running_servers_replies(roost):
    """Two sockets share the kept-replies dir; one server's --gone must not judge the other's."""
    other = {"ROOST_SOCKET": f"{roost.socket}-other"}
    assert roost.run("new", "-d", "-s", "other", "sh", env=other).returncode == 0
    try:
        proc = subprocess.run(
            ["tmux", "-S", other["ROOST_SOCKET"], "display-message", "-p", "#{start_time}-#{pid}"],
            capture_output=True,
            text=True,
            env=roost.env,
        )
        kept = records(roost) / proc.stdout.strip() / "9" / "replies"
        kept.mkdir(parents=True)
        (kept / "000001").write_text("the other server's answer")
        Shell.open(roost, "here")
        assert roost.run("forget", "--gone").returncode == 0
        assert (kept / "000001").exists()
    finally:
        roost.run("kill", env=other)
