"""``roost wait-done``: every row of its exit table, window targets, ``--turn``, dialogs."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import BIN, Roost


def agent(roost: Roost, name: str, *flags: str) -> str:
    """A fake agent in its own window of session main (a shell session is started first)."""
    if not roost.tmux("list-sessions", "-F", "x", check=False):
        roost.start()
    pane = roost.window(name, roost.fake_agent(*flags))
    roost.wait_screen(pane, "fake agent ready")
    return pane


def split_agent(roost: Roost, beside: str, *flags: str) -> str:
    pane = roost.tmux(
        "split-window", "-d", "-P", "-F", "#{pane_id}", "-t", beside, roost.fake_agent(*flags)
    ).strip()
    roost.wait_screen(pane, "fake agent ready")
    return pane


def state(roost: Roost, pane: str) -> str:
    return roost.option(pane, "@roost-state")


def prompt(roost: Roost, pane: str, text: str, until: str = "working") -> None:
    """Submit ``text`` and wait for the pane's badge to read ``until``."""
    roost.tmux("send-keys", "-t", pane, "-l", text)
    roost.tmux("send-keys", "-t", pane, "Enter")
    roost.wait_for(lambda: state(roost, pane) == until, timeout=20, what=f"{pane} {until}")


def wait_done(roost: Roost, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """Start ``roost wait-done ARGS`` in the background."""
    return subprocess.Popen(
        [str(BIN / "roost"), "wait-done", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**roost.env, **(env or {})},
    )


def finish(proc: subprocess.Popen[str], timeout: float = 60) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def test_done_exits_0_once_the_turn_ends(roost: Roost) -> None:
    pane = agent(roost, "api", "--work", "2")
    prompt(roost, pane, "go")
    started = time.monotonic()
    proc = roost.run("wait-done", pane)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert time.monotonic() - started > 0.5
    assert state(roost, pane) == "done"
    assert roost.run("wait-done", "api").returncode == 0  # already done: at once


def test_a_pane_with_no_badge_is_not_waited_for(roost: Roost) -> None:
    pane = roost.start("sh")
    proc = roost.run("wait-done", pane, "5")
    assert (proc.returncode, proc.stderr) == (0, "")


def test_zero_timeout_waits_with_no_limit(roost: Roost) -> None:
    pane = agent(roost, "api", "--work", "1.5")
    prompt(roost, pane, "go")
    assert roost.run("wait-done", pane, "0").returncode == 0
    assert state(roost, pane) == "done"


def test_error_state_exits_1_and_names_the_reason(roost: Roost) -> None:
    pane = agent(roost, "api", "--work", "1", "--error-on", "fail")
    prompt(roost, pane, "please fail")
    proc = roost.run("wait-done", pane, "30")
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        f"roost wait-done: '{pane}' is in error state",
        "roost wait-done: reason: API Error: 400",
    ]


def test_error_with_no_reason_is_one_line(roost: Roost) -> None:
    pane = roost.start("sh")
    roost.tmux("set-option", "-p", "-t", pane, "@roost-state", "error")
    proc = roost.run("wait-done", pane)
    assert proc.returncode == 1
    assert proc.stderr == f"roost wait-done: '{pane}' is in error state\n"


def test_timed_out_while_still_busy(roost: Roost) -> None:
    pane = agent(roost, "api", "--work", "60")
    prompt(roost, pane, "go")
    started = time.monotonic()
    proc = roost.run("wait-done", pane, "1")
    assert 0.9 < time.monotonic() - started < 15
    assert proc.returncode == 1
    assert proc.stderr.startswith("roost wait-done: timed out")
    assert f"'{pane}' is still working" in proc.stderr


@pytest.mark.parametrize("timeout", ["abc", "-5", "1.5", "", "2s"])
def test_bad_timeout_is_a_usage_error_before_any_waiting(roost: Roost, timeout: str) -> None:
    pane = agent(roost, "api", "--work", "60")
    prompt(roost, pane, "go")
    started = time.monotonic()
    proc = roost.run("wait-done", pane, timeout)
    assert time.monotonic() - started < 10
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.startswith("usage:")


def test_usage_errors(roost: Roost) -> None:
    pane = roost.start("sh")
    for args in ([], ["--json", pane], [pane, "5", "6"], ["--turn"]):
        proc = roost.run("wait-done", *args)
        assert (proc.returncode, proc.stdout) == (1, ""), args
        assert proc.stderr.startswith("usage:"), args


def test_a_target_that_does_not_exist_is_gone(roost: Roost) -> None:
    nothing = roost.run("wait-done", "api")
    assert nothing.returncode == 2 and "is gone" in nothing.stderr  # no server at all
    roost.start("sh")
    for target in ("%999", "nosuch", "main:9"):
        proc = roost.run("wait-done", target)
        assert proc.returncode == 2, target
        assert proc.stderr.startswith(f"roost wait-done: '{target}' is gone"), target


def test_died_when_the_agent_is_killed_at_a_shell_prompt(roost: Roost) -> None:
    pane = roost.start("sh")
    roost.tmux("send-keys", "-t", pane, f"PATH={BIN}:$PATH {roost.fake_agent('--work', '60')}", "Enter")
    roost.wait_screen(pane, "fake agent ready")
    prompt(roost, pane, "go")
    job = int(roost.option(pane, "@roost-job"))
    assert str(job) != roost.option(pane, "pane_pid")  # the agent is a job of its own
    waiter = wait_done(roost, pane, "120")
    time.sleep(0.5)
    assert waiter.poll() is None
    os.killpg(job, signal.SIGKILL)
    rc, out, err = finish(waiter)
    assert (rc, out) == (2, "")
    assert f"'{pane}' died (working)" in err
    assert roost.option(pane, "pane_id") == pane  # the pane and its shell live on


def test_died_when_the_pane_closes_while_working(roost: Roost) -> None:
    pane = agent(roost, "api", "--work", "60")
    prompt(roost, pane, "go")
    waiter = wait_done(roost, pane)
    time.sleep(0.5)
    roost.tmux("kill-pane", "-t", pane)
    rc, _, err = finish(waiter)
    assert rc == 2
    assert f"'{pane}' died (working)" in err


def test_died_when_the_pane_is_left_dead(roost: Roost) -> None:
    pane = agent(roost, "api", "--work", "60")
    roost.tmux("set-option", "-w", "-t", pane, "remain-on-exit", "on")
    prompt(roost, pane, "go")
    waiter = wait_done(roost, pane)
    time.sleep(0.5)
    os.killpg(int(roost.option(pane, "@roost-job")), signal.SIGKILL)
    rc, _, err = finish(waiter)
    assert rc == 2
    assert "died (working)" in err
    assert roost.option(pane, "pane_dead") == "1"


def test_an_agent_that_died_before_the_wait_began(roost: Roost) -> None:
    pane = agent(roost, "api", "--dialog-on", "perm")
    prompt(roost, pane, "needs perm", until="blocked")
    roost.tmux("set-option", "-w", "-t", pane, "remain-on-exit", "on")
    os.killpg(int(roost.option(pane, "@roost-job")), signal.SIGKILL)
    roost.wait_for(lambda: roost.option(pane, "pane_dead") == "1")
    proc = roost.run("wait-done", pane, "30")
    assert proc.returncode == 2
    assert "died (needs input)" in proc.stderr


def test_window_target_waits_for_every_agent_pane(roost: Roost) -> None:
    quick = agent(roost, "duo", "--work", "0.5")
    slow = split_agent(roost, quick, "--work", "3")
    prompt(roost, quick, "go")
    prompt(roost, slow, "go")
    proc = roost.run("wait-done", "duo", "60")
    assert (proc.returncode, proc.stderr) == (0, "")
    assert (state(roost, quick), state(roost, slow)) == ("done", "done")


def test_window_with_an_errored_pane_exits_1_after_the_rest_finish(roost: Roost) -> None:
    failing = agent(roost, "duo", "--work", "0.5", "--error-on", "fail")
    slow = split_agent(roost, failing, "--work", "3")
    prompt(roost, failing, "fail")
    prompt(roost, slow, "go")
    proc = roost.run("wait-done", "duo", "60")
    assert proc.returncode == 1
    assert f"{failing} of 'duo' is in error state" in proc.stderr
    assert "reason: API Error: 400" in proc.stderr
    assert state(roost, slow) == "done"


def test_window_pane_that_errored_then_closed_still_counts(roost: Roost) -> None:
    failing = agent(roost, "duo", "--work", "0.5", "--error-on", "fail")
    slow = split_agent(roost, failing, "--work", "3")
    prompt(roost, slow, "go")
    waiter = wait_done(roost, "duo", "60")
    prompt(roost, failing, "fail", until="error")
    roost.tmux("kill-pane", "-t", failing)
    rc, _, err = finish(waiter)
    assert rc == 1
    assert err.splitlines() == [
        f"roost wait-done: {failing} of 'duo' is in error state",
        "roost wait-done: reason: API Error: 400",
    ]


def test_window_pane_that_finished_then_closed_is_done(roost: Roost) -> None:
    quick = agent(roost, "duo", "--work", "0.5")
    slow = split_agent(roost, quick, "--work", "4")
    prompt(roost, quick, "go")
    prompt(roost, slow, "go")
    waiter = wait_done(roost, "duo", "60")
    roost.wait_for(lambda: state(roost, quick) == "done", timeout=20)
    roost.tmux("kill-pane", "-t", quick)
    rc, _, err = finish(waiter)
    assert (rc, err) == (0, "")
    assert state(roost, slow) == "done"


def test_an_agent_that_exits_the_moment_it_finishes_is_done(roost: Roost) -> None:
    pane = agent(roost, "api", "--work", "1", "--exit-after-turn")
    prompt(roost, pane, "go")
    rc, _, err = finish(wait_done(roost, pane, "60"))
    assert (rc, err) == (0, "")


def test_window_of_agents_that_all_exit_on_finishing(roost: Roost) -> None:
    first = agent(roost, "duo", "--work", "1", "--exit-after-turn")
    second = split_agent(roost, first, "--work", "1.5", "--exit-after-turn")
    prompt(roost, first, "go")
    prompt(roost, second, "go")
    rc, _, err = finish(wait_done(roost, "duo", "60"))
    assert (rc, err) == (0, "")


def test_a_dismissed_dialog_does_not_wait_forever(roost: Roost, tmp_path: Path) -> None:
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text("")
    pane = agent(roost, "api", "--dialog-on", "perm", "--transcript", str(transcript))
    prompt(roost, pane, "needs perm", until="blocked")
    waiter = wait_done(roost, pane, "60")
    time.sleep(1.2)  # the dialog's opening time is kept in whole seconds
    assert waiter.poll() is None
    roost.tmux("send-keys", "-t", pane, "Escape")
    rc, _, err = finish(waiter)
    assert (rc, err) == (0, "")
    assert state(roost, pane) == ""


# --turn N


def test_turn_waits_for_that_turn_to_be_recorded(roost: Roost) -> None:
    pane = agent(roost, "api", "--work", "2", "--echo-reply")
    prompt(roost, pane, "first")
    assert roost.option(pane, "@roost-turn") == "1"
    proc = roost.run("wait-done", "--turn", "1", pane, "60")
    assert (proc.returncode, proc.stderr) == (0, "")
    assert roost.run("read", "--turn", "1", pane).stdout == "reply to: first"
    assert roost.run("wait-done", "--turn", "1", pane).returncode == 0  # already recorded


def test_turn_waits_through_a_pane_that_is_not_yet_busy(roost: Roost) -> None:
    pane = agent(roost, "api", "--work", "1")
    waiter = wait_done(roost, "--turn", "1", pane, "60")
    time.sleep(0.5)
    assert waiter.poll() is None  # plain wait-done would have returned: the badge is not busy
    prompt(roost, pane, "go")
    rc, _, err = finish(waiter)
    assert (rc, err) == (0, "")
    assert roost.option(pane, "@roost-turn-done") == "1"


def test_turn_that_errored_exits_1(roost: Roost) -> None:
    pane = agent(roost, "api", "--work", "1", "--error-on", "fail")
    prompt(roost, pane, "fail")
    proc = roost.run("wait-done", "--turn", "1", pane, "60")
    assert proc.returncode == 1
    assert f"'{pane}' is in error state" in proc.stderr


def test_timed_out_waiting_for_turn(roost: Roost) -> None:
    pane = agent(roost, "api")
    prompt(roost, pane, "go", until="done")
    proc = roost.run("wait-done", "--turn", "5", pane, "1")
    assert proc.returncode == 1
    assert proc.stderr.startswith("roost wait-done: timed out waiting for turn 5")


@pytest.mark.parametrize("value", ["0", "abc", "-1", "1.5"])
def test_turn_must_be_a_positive_whole_number(roost: Roost, value: str) -> None:
    pane = agent(roost, "api", "--work", "60")
    prompt(roost, pane, "go")
    started = time.monotonic()
    proc = roost.run("wait-done", "--turn", value, pane, "30")
    assert time.monotonic() - started < 10
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.startswith("roost wait-done: --turn needs a positive whole number")


def test_turn_refuses_a_window_target(roost: Roost) -> None:
    agent(roost, "api", "--work", "60")
    proc = roost.run("wait-done", "--turn", "1", "api", "30")
    assert proc.returncode == 1
    assert proc.stderr.startswith("roost wait-done: --turn needs a %N pane")


def test_turn_refuses_a_pane_whose_replies_are_not_recorded(roost: Roost) -> None:
    pane = agent(roost, "api", "--work", "60")
    prompt(roost, pane, "go")
    proc = roost.run("wait-done", "--turn", "1", pane, "30", env={"ROOST_RECORD_DIR": ""})
    assert proc.returncode == 1
    assert proc.stderr.startswith("roost wait-done: --turn: replies are not recorded")


def test_turn_on_a_pane_that_closes_first_is_died(roost: Roost) -> None:
    pane = agent(roost, "api")
    waiter = wait_done(roost, "--turn", "1", pane, "60")
    time.sleep(0.5)
    roost.tmux("kill-pane", "-t", pane)
    rc, _, err = finish(waiter)
    assert rc == 2
    assert f"'{pane}' died: its pane ended before turn 1 was recorded" in err


def test_an_empty_target_says_what_a_target_is(roost: Roost) -> None:
    roost.start("sh")
    for args in (("wait-done", ""), ("screen", ""), ("read", "")):
        proc = roost.run(*args)
        assert (proc.returncode, proc.stdout) == (1, "")
        assert proc.stderr == (
            "usage: the target is empty: name a pane (%N), a window or a -n name (roost status lists them)\n"
        )
