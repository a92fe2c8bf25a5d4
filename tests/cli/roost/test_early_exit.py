"""A pane roost opens runs in the caller's environment, and a command that exits soon after it
started leaves its pane, dead, with its last screen and how it ended, until someone closes it.

The tmux server keeps the environment of whichever roost call started it: each test starts the
server from one call, then opens panes from another whose environment differs.
"""

from __future__ import annotations

import time

import pytest

from tests.cli.roost.test_pane_env import dumping, environ
from tests.cli.roost.test_windows import panes
from tests.conftest import Roost
from tests.lostexit import exits_unheard, settled, unheard

FAILING = "echo 'fatal: no API key in this environment' >&2; sleep 0.2; exit 3"
"""An agent that fails at start: one line of error, exit status 3. It lingers a moment before it
exits, as a real agent does while it shuts down: a pane's output reaches tmux a little after it
is written, and tmux drops what is still on its way when it handles the exit first (under load,
about 1 command in 400 that exit at once; docs/contracts.md)."""


def entry(roost: Roost, pane: str) -> dict:
    return next(p for p in roost.json("status", "--json")["panes"] if p["id"] == pane)


def dead(roost: Roost, pane: str) -> bool:
    return roost.option(pane, "pane_dead") == "1"


def server_pid(roost: Roost) -> int:
    return int(roost.tmux("display-message", "-p", "#{pid}"))


@pytest.mark.parametrize("verb", ["spawn", "split", "view", "new"])
def test_a_variable_exported_only_in_the_callers_environment_reaches_the_pane(
    roost: Roost, verb: str
) -> None:
    keeper = roost.start("sh")  # the server, started without the variable
    args = {
        "spawn": ("spawn", "agent"),
        "split": ("split", "-t", keeper),
        "view": ("view", "-n", "look"),
        "new": ("new", "-d", "-s", "other"),
    }[verb]
    mine = {"ROOST_TEST_KEY": "only-here", "PATH": roost.env["PATH"] + ":/only/here", "TERM": "xterm"}
    proc = roost.run(*args, dumping(roost, verb), env=mine)
    assert proc.returncode == 0, proc.stderr
    env = environ(roost, verb)
    assert env["ROOST_TEST_KEY"] == "only-here"
    assert env["PATH"].endswith(":/only/here")
    assert env["TERM"] == "tmux-256color"  # tmux's own, never the caller's outer terminal's
    assert env["TMUX"].startswith(roost.socket + ",")


def test_a_value_changed_since_the_server_started_is_the_callers(roost: Roost) -> None:
    roost.run("new", "-d", "-s", "main", env={"ROOST_TEST_KEY": "old"})
    proc = roost.run("spawn", "agent", dumping(roost, "agent"), env={"ROOST_TEST_KEY": "new"})
    assert proc.returncode == 0, proc.stderr
    assert environ(roost, "agent")["ROOST_TEST_KEY"] == "new"


def test_a_variable_too_large_for_one_tmux_command_is_named_and_the_rest_still_arrive(roost: Roost) -> None:
    """tmux refuses a command line over 16 KB: the spawn still opens, and says what it left out."""
    roost.start("sh")
    mine = {"ROOST_TEST_HUGE": "x" * 20_000, "ROOST_TEST_KEY": "small"}
    proc = roost.run("spawn", "agent", dumping(roost, "agent"), env=mine)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == (
        "roost spawn: 1 of this environment's variables are too large for one tmux command "
        "and keep the server's values in the new pane: ROOST_TEST_HUGE\n"
    )
    env = environ(roost, "agent")
    assert env["ROOST_TEST_KEY"] == "small" and "ROOST_TEST_HUGE" not in env


def test_a_command_that_fails_at_start_keeps_its_screen_and_status_until_closed(roost: Roost) -> None:
    roost.start("sh", session="main")
    proc = roost.run("spawn", "agent", FAILING)
    assert proc.returncode == 0, proc.stderr
    pane = proc.stdout.strip()
    roost.wait_for(lambda: dead(roost, pane), what="the command to exit")
    time.sleep(0.5)  # closed, it would be gone by now
    # tmux before 3.6 may miss the exit's SIGCHLD and learn how it ended only as the keep ends
    # (roost.tmux.conf): the line that says so is drawn then.
    roost.wait_for(lambda: entry(roost, pane)["exit_status"] == 3, timeout=20, what="how it ended")
    screen = roost.run("screen", "agent")
    assert screen.returncode == 0, screen.stderr
    lines = screen.stdout.splitlines()
    assert lines[0] == "fatal: no API key in this environment"
    assert lines[-1].startswith("exited with status 3 at ")
    assert lines[-1].endswith(f"; roost close {pane} closes this pane")
    found = entry(roost, pane)
    assert (found["dead"], found["exit_status"], found["exit_signal"]) == (True, 3, None)
    assert found["name"] == "agent"
    table = roost.run("status").stdout
    assert any(line.endswith("exited with status 3") and pane in line for line in table.splitlines()), table
    sent = roost.run("send", "agent", "hello")
    assert sent.returncode == 2
    assert f"pane {pane} is dead: its program exited; roost screen {pane} shows how it ended" in sent.stderr
    assert roost.run("close", "agent").returncode == 0
    assert pane not in panes(roost)


def test_a_command_killed_by_a_signal_says_which(roost: Roost) -> None:
    roost.start("sh")
    pane = roost.run("spawn", "agent", "kill -KILL $$").stdout.strip()
    roost.wait_for(lambda: dead(roost, pane), what="the command to be killed")
    found = entry(roost, pane)
    assert (found["dead"], found["exit_status"], found["exit_signal"]) == (True, None, 9)
    assert roost.run("screen", "agent").stdout.splitlines()[-1].startswith("killed by signal 9 at ")


def test_a_kept_pane_that_is_its_sessions_last_closes_with_its_session(roost: Roost) -> None:
    """No server yet: spawn makes session main for the command alone; closing its dead pane ends
    the session, which holds nothing else."""
    pane = roost.run("spawn", "agent", FAILING).stdout.strip()
    roost.wait_for(lambda: dead(roost, pane), what="the command to exit")
    proc = roost.run("close", pane)
    assert proc.returncode == 0, proc.stderr
    assert roost.tmux("list-sessions", "-F", "#{session_name}", check=False) == ""


def test_a_command_that_exits_later_closes_its_pane_as_before(roost: Roost) -> None:
    roost.start("sh")
    roost.tmux("set-option", "-g", "@roost-keep-exited", "1")
    pane = roost.run("spawn", "agent", "sleep 2; exit 1").stdout.strip()
    roost.wait_for(lambda: pane not in panes(roost), timeout=15, what="the pane to close")


def test_a_command_that_exits_later_closes_its_pane_though_tmux_never_hears_it_end(roost: Roost) -> None:
    """tmux before 3.6 now and then misses a pane's SIGCHLD (tests/lostexit.py): it never runs
    pane-died for that pane, so closing one that exits later cannot wait for it. The pane's
    remain-on-exit goes back off as its keep ends, and tmux closes it when its terminal ends."""
    roost.start("sh")
    roost.tmux("set-option", "-g", "@roost-keep-exited", "1")
    server = server_pid(roost)
    with exits_unheard(server, roost.socket):
        pane = roost.run("spawn", "agent", "sleep 2; exit 1").stdout.strip()
        child = int(roost.option(pane, "pane_pid"))
        roost.wait_for(lambda: pane not in panes(roost), timeout=15, what="the pane to close")
        assert unheard(child, server)


def test_a_kept_pane_whose_end_tmux_never_heard_says_how_it_ended_when_its_keep_ends(roost: Roost) -> None:
    """The shell that ends a pane's keep is one more SIGCHLD for tmux, which then collects every
    child that has ended: the exit it missed, and the line that says how it ended. The keep is
    long enough that the checks before it ends are done first on a loaded machine (5 s was not,
    once, in a full run on two cores)."""
    keeper = int(roost.option(roost.start("sh"), "pane_pid"))
    roost.tmux("set-option", "-g", "@roost-keep-exited", "20")
    server = server_pid(roost)
    with exits_unheard(server, roost.socket):
        pane = roost.run("spawn", "agent", FAILING).stdout.strip()
        child = int(roost.option(pane, "pane_pid"))
        roost.wait_for(lambda: unheard(child, server), what="the command to end unheard")
        roost.wait_for(lambda: settled(server, {keeper}), what="the jobs the open started to end")
    assert entry(roost, pane)["exit_status"] is None
    roost.wait_for(
        lambda: entry(roost, pane)["exit_status"] == 3, timeout=40, what="tmux to learn how it ended"
    )
    lines = roost.run("screen", "agent").stdout.splitlines()
    assert lines[0] == "fatal: no API key in this environment"
    assert lines[-1].startswith("exited with status 3 at ")
    assert pane in panes(roost)


def test_a_keep_of_0_keeps_no_pane(roost: Roost) -> None:
    keeper = roost.start("sh")
    roost.tmux("set-option", "-g", "@roost-keep-exited", "0")
    pane = roost.run("spawn", "agent", FAILING).stdout.strip()
    roost.wait_for(lambda: panes(roost) == [keeper], what=f"{pane} to close")


def test_a_shell_a_person_leaves_and_a_pane_tmux_opened_close_at_once(roost: Roost) -> None:
    keeper = roost.start("sh")
    shell = roost.run("spawn", "shell").stdout.strip()
    roost.tmux("send-keys", "-t", shell, "exit", "Enter")
    roost.window("plain", "exit 3")
    roost.wait_for(lambda: panes(roost) == [keeper], what="both panes to close")


def test_an_open_tmux_refuses_leaves_no_pane_to_be_kept_by_mistake(roost: Roost) -> None:
    """A refused open runs no hook; the option the hooks read is cleared all the same, or the
    next pane a person opens would be kept as if roost had opened it."""
    keeper = roost.start("sh")
    roost.tmux("resize-window", "-t", keeper, "-x", "2", "-y", "2")
    proc = roost.run("split", "-t", keeper, "exit 3")
    assert proc.returncode == 1 and "no space for new pane" in proc.stderr, proc.stderr
    assert roost.tmux("show-options", "-gqv", "@roost-opening").strip() == ""
    plain = roost.window("plain", "exit 3")
    roost.wait_for(lambda: plain not in panes(roost), what="the plain pane to close")
