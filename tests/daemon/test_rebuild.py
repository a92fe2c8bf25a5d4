"""Rebuilding the roster on start from roost's tmux server and a process scan, and keeping it
current afterwards: badges set before the daemon ran, after it started, and across a kill -9."""

from __future__ import annotations

import signal
import time
from typing import Any

from tests.conftest import Roost
from tests.daemon.fixture import Daemon

REBUILD_BOUND = 1.0  # seconds: the roster is whole again in under a second
GENEROUS = 10.0  # seconds for anything that waits on a loaded machine


def badged(roost: Roost, word: str = "working") -> str:
    """A pane (in a session named after the word) whose program badges itself with
    ``roost state WORD`` and then stays."""
    pane = roost.start(f"sh -c 'roost state {word}; exec sleep 600'", session=word)
    roost.wait_for(lambda: roost.option(pane, "@roost-state") == word, what=f"{pane} badged {word}")
    return pane


def in_pane(daemon: Daemon, pane: str) -> dict[str, Any] | None:
    return daemon.record_where(lambda r: (r.get("tmux") or {}).get("pane") == pane)


def ours(daemon: Daemon, roost: Roost) -> dict[str, dict[str, Any]]:
    """The sessions in this test's tmux server (agents elsewhere on the machine are sessions too)."""
    return {
        r["session_key"]: r
        for r in daemon.snapshot()["records"]
        if (r.get("tmux") or {}).get("socket") == roost.socket
    }


def state(roost: Roost, pane: str, word: str) -> None:
    """``roost state WORD`` as the pane's own program would run it."""
    proc = roost.run("state", word, env={"TMUX": f"{roost.socket},1,0", "TMUX_PANE": pane})
    assert proc.returncode == 0, proc.stderr


def test_a_badge_set_before_the_daemon_started_is_in_the_first_snapshot(roost: Roost, daemon: Daemon) -> None:
    pane = badged(roost)
    pid = int(roost.option(pane, "pane_pid"))
    took = daemon.start()
    record = in_pane(daemon, pane)
    assert record is not None, daemon.snapshot()
    assert (record["activity"], record["activity_event"], record["pid"]) == ("active", "working", pid)
    assert record["sources"] == ["hook", "scan"]
    assert record["lane"] == "interactive"
    assert record["tmux"]["socket"] == roost.socket
    status = daemon.get("/status")
    assert status["rebuild"]["ms"] < REBUILD_BOUND * 1000
    assert status["rebuild"]["sessions"] >= 1  # other agents on this machine count too
    assert took < GENEROUS
    print(f"rebuild {status['rebuild']['ms']} ms; spawn to first answer {took * 1000:.0f} ms")


def test_kill_9_and_restart_brings_back_the_same_sessions_with_their_state(
    roost: Roost, daemon: Daemon
) -> None:
    working, blocked = badged(roost), badged(roost, "blocked")
    daemon.start()
    before = ours(daemon, roost)
    assert len(before) == 2
    assert daemon.stop(signal.SIGKILL) == -signal.SIGKILL
    began = time.monotonic()
    daemon.start()
    after = ours(daemon, roost)
    elapsed = time.monotonic() - began
    assert after.keys() == before.keys()
    for key, record in after.items():
        for field in (
            "pid",
            "start_ticks",
            "activity",
            "activity_event",
            "activity_at",
            "tmux",
            "started_at",
        ):
            assert record[field] == before[key][field], field
    assert in_pane(daemon, blocked)["activity"] == "needs_attention"  # type: ignore[index]
    assert in_pane(daemon, working)["activity"] == "active"  # type: ignore[index]
    assert daemon.get("/status")["rebuild"]["ms"] < REBUILD_BOUND * 1000
    assert elapsed < GENEROUS
    print(f"restart to full roster {elapsed * 1000:.0f} ms")


def test_a_badge_changed_while_the_daemon_runs_is_claimed_once(roost: Roost, running: Daemon) -> None:
    pane = roost.start("sleep 600")
    assert in_pane(running, pane) is None  # no badge, no agent: not a session
    state(roost, pane, "working")
    running.wait_for(lambda: (in_pane(running, pane) or {}).get("activity") == "active", what="working")
    state(roost, pane, "blocked")
    record = running.wait_for(
        lambda: (r := in_pane(running, pane)) and r["activity"] == "needs_attention" and r, what="blocked"
    )
    time.sleep(1.0)  # five scan passes with nothing new: no claim, no change
    again = in_pane(running, pane)
    assert again is not None
    assert (again["revision"], again["activity_seq"]) == (record["revision"], record["activity_seq"])


def test_a_cleared_badge_leaves_the_session_idle(roost: Roost, running: Daemon) -> None:
    pane = roost.start("sleep 600")
    state(roost, pane, "blocked")
    running.wait_for(lambda: (in_pane(running, pane) or {}).get("activity") == "needs_attention")
    roost.tmux("set-option", "-p", "-u", "-t", pane, "@roost-state")
    record = running.wait_for(lambda: (r := in_pane(running, pane)) and r["activity"] == "idle" and r)
    assert record["activity_event"] == "cleared"


def test_a_closed_pane_ends_its_session(roost: Roost, running: Daemon) -> None:
    roost.start("sleep 600", session="keep")  # the server outlives the pane
    pane = badged(roost)
    key = running.wait_for(lambda: in_pane(running, pane), what="session")["session_key"]
    roost.tmux("kill-pane", "-t", pane)
    record = running.wait_for(
        lambda: (r := running.get(f"/sessions/{key}")) and r["liveness"] == "ended" and r, what="ended"
    )
    assert record["ended_reason"] == "exit"
