"""Screen detection in a running daemon: a pane that shows a Claude screen, with no hooks at
all, is in the roster with that screen's activity (source ``screen``) within a second of the
screen changing; a hook's word on the same pane wins over the screen's."""

from __future__ import annotations

import shlex
import time
from typing import Any

import pytest

from tests.conftest import Roost
from tests.daemon.fixture import Daemon
from tests.fakes.screen_tui import fixture

FOLLOW_BOUND = 1.0  # seconds from a screen change to the roster showing it
GENEROUS = 10.0  # seconds for anything that waits on a loaded machine
CLEAR = r"\033[H\033[2J\033[3J"


def fake_tui(first: str) -> str:
    """A program that clears its screen and prints a recorded Claude screen, then another each
    time a fixture's name is typed at it (not echoed): a TUI that fires no hooks."""
    show = f'printf "{CLEAR}"; cat "$f"'
    script = f"stty -echo; f={shlex.quote(str(fixture(first)))}; {show}; while read f; do {show}; done"
    return shlex.join(["sh", "-c", script])


def show(roost: Roost, pane: str, name: str) -> float:
    """Make the fake TUI print fixture ``name``; returns when it was asked to."""
    asked = time.monotonic()
    roost.tmux("send-keys", "-t", pane, str(fixture(name)), "Enter")
    return asked


def in_pane(daemon: Daemon, pane: str) -> dict[str, Any] | None:
    return daemon.record_where(lambda r: (r.get("tmux") or {}).get("pane") == pane)


def follows(
    daemon: Daemon, pane: str, activity: str, event: str, timeout: float = GENEROUS
) -> dict[str, Any]:
    def shown() -> dict[str, Any] | None:
        record = in_pane(daemon, pane)
        if record and (record["activity"], record["activity_event"]) == (activity, event):
            return record
        return None

    found: dict[str, Any] = daemon.wait_for(shown, timeout, f"{pane} {activity}/{event}")
    return found


def activity_source(daemon: Daemon, key: str) -> str:
    return daemon.get(f"/sessions/{key}/explain")["fields"]["activity"]["source"]


@pytest.mark.alone  # a bound on time
def test_a_screen_with_no_hooks_is_followed_within_a_second(roost: Roost, daemon: Daemon) -> None:
    pane = roost.start(fake_tui("working"), session="tui")
    roost.wait_screen(pane, "esc to interrupt")
    daemon.start()
    record = follows(daemon, pane, "active", "working")
    assert record["sources"] == ["screen"]
    assert record["harness"] == "claude"
    assert record["pid"] == int(roost.option(pane, "pane_pid"))
    assert record["tmux"]["socket"] == roost.socket
    assert record["tmux"]["session"] == "tui"
    assert activity_source(daemon, record["session_key"]) == "screen"
    took = []
    for name, activity, event in (
        ("permission", "needs_attention", "permission"),
        ("working", "active", "working"),
        ("done", "idle", "done"),
        ("idle", "idle", "idle"),
    ):
        asked = show(roost, pane, name)
        record = follows(daemon, pane, activity, event)
        took.append(time.monotonic() - asked)
        if name == "permission":
            assert (record["pending"]["summary"], record["pending"]["tool"]) == ("Bash: touch x", "Bash")
        else:
            assert record["pending"] is None
        assert record["session_key"] == in_pane(daemon, pane)["session_key"]  # one session throughout
    print("screen change to roster:", ", ".join(f"{t * 1000:.0f} ms" for t in took))
    assert max(took) < FOLLOW_BOUND


def test_a_pane_that_starts_after_the_daemon_is_read(roost: Roost, daemon: Daemon) -> None:
    roost.start("sleep 600", session="first")
    daemon.start()
    pane = roost.start(fake_tui("permission"), session="later")
    record = follows(daemon, pane, "needs_attention", "permission")
    assert record["sources"] == ["screen"]


def test_a_server_with_no_session_yet_is_watched_once_its_first_session_comes(
    roost: Roost, daemon: Daemon
) -> None:
    """A server caught between making its socket and making its first session (here held
    there by ``exit-empty off``) was taken as watched, or looked at again only after five
    seconds: its first session's panes went unread and every page missed their changes."""
    conf = roost.root / "empty.conf"
    conf.write_text("set -g exit-empty off\n")
    roost.tmux("-f", str(conf), "start-server")
    daemon.start()
    pane = roost.start(fake_tui("working"), session="first")
    follows(daemon, pane, "active", "working", FOLLOW_BOUND * 2)


def test_a_tmux_server_that_starts_after_the_daemon_is_watched(roost: Roost, daemon: Daemon) -> None:
    daemon.start()
    pane = roost.start(fake_tui("working"), session="late")
    record = follows(daemon, pane, "active", "working", FOLLOW_BOUND * 3)
    assert record["sources"] == ["screen"]
    asked = show(roost, pane, "permission")
    follows(daemon, pane, "needs_attention", "permission")
    assert time.monotonic() - asked < FOLLOW_BOUND


def test_a_plain_shell_screen_makes_no_session(roost: Roost, daemon: Daemon) -> None:
    pane = roost.start("sh -c 'echo hello there; exec sleep 600'", session="plain")
    roost.wait_screen(pane, "hello there")
    daemon.start()
    witness = roost.start(fake_tui("idle"), session="witness")
    follows(daemon, witness, "idle", "idle")  # the daemon has read panes by now
    assert in_pane(daemon, pane) is None


def test_a_hook_on_the_same_pane_wins_over_the_screen(roost: Roost, daemon: Daemon) -> None:
    pane = roost.start(fake_tui("idle"), session="tui")
    daemon.start()
    key = follows(daemon, pane, "idle", "idle")["session_key"]
    proc = roost.run("state", "working", env={"TMUX": f"{roost.socket},1,0", "TMUX_PANE": pane})
    assert proc.returncode == 0, proc.stderr
    record = follows(daemon, pane, "active", "working")
    assert record["session_key"] == key
    daemon.wait_for(lambda: activity_source(daemon, key) == "hook", GENEROUS, "the hook's activity")
    show(roost, pane, "permission")
    roost.wait_screen(pane, "Do you want to proceed?")
    time.sleep(FOLLOW_BOUND)  # as long as the screen would take to be followed
    record = in_pane(daemon, pane)
    assert record is not None
    assert (record["activity"], record["activity_event"], record["pending"]) == ("active", "working", None)
    assert activity_source(daemon, key) == "hook"
    assert "screen" in record["sources"] and "hook" in record["sources"]


def test_a_closed_pane_ends_its_screen_session(roost: Roost, daemon: Daemon) -> None:
    roost.start("sleep 600", session="keep")
    pane = roost.start(fake_tui("working"), session="tui")
    daemon.start()
    key = follows(daemon, pane, "active", "working")["session_key"]
    roost.tmux("kill-pane", "-t", pane)
    daemon.wait_for(
        lambda: (
            next(r for r in daemon.snapshot()["records"] if r["session_key"] == key)["liveness"] == "ended"
        ),
        GENEROUS,
        "the session ended",
    )


def test_a_finished_looking_frame_between_busy_screens_is_not_claimed(roost: Roost, daemon: Daemon) -> None:
    """Between a dialog closing and the spinner starting, a screen can look finished for a
    moment. The roster must not say idle (a lie, and a false 'done' notification) for that."""
    pane = roost.start(fake_tui("permission"), session="tui")
    roost.wait_screen(pane, "Do you want")
    daemon.start()
    follows(daemon, pane, "needs_attention", "permission")
    seen: list[str] = []

    def watch(seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            record = in_pane(daemon, pane)
            if record and (not seen or seen[-1] != record["activity"]):
                seen.append(record["activity"])
            time.sleep(0.02)

    show(roost, pane, "idle")
    watch(0.25)  # longer than the watcher's coalescing, shorter than the settle
    show(roost, pane, "working")
    watch(1.5)
    assert seen == ["needs_attention", "active"], seen


def test_a_screen_that_stays_finished_is_claimed_once_settled(roost: Roost, daemon: Daemon) -> None:
    """The wait is only a settle: a finished screen with no further output is still claimed."""
    pane = roost.start(fake_tui("working"), session="tui")
    roost.wait_screen(pane, "esc to interrupt")
    daemon.start()
    follows(daemon, pane, "active", "working")
    asked = show(roost, pane, "done")
    follows(daemon, pane, "idle", "done")
    assert time.monotonic() - asked < FOLLOW_BOUND + 0.5
