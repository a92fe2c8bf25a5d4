"""``kill -9`` the daemon while agents work, wait and finish, restart it: nothing a client relied
on is lost. The roster comes back whole from roost's tmux badges and a process scan (nothing
about status is persisted), with the same session keys; a client that follows ``GET /changes``
from the last change it saw before the kill gets a snapshot (a new status epoch) and then the
turn that was in flight ending; the reply of that turn can still be read with ``roost read``.

The agents are the fake agent TUI, badging themselves and posting claims through the real
``rosterd-hook``, each in its own roost session.
"""

from __future__ import annotations

import signal
import time
from typing import Any

from tests.api.sse import Events
from tests.conftest import Roost
from tests.daemon.fixture import Daemon

RESTART_BOUND = 1.0  # seconds from the restarted daemon's first answer to a whole roster
GENEROUS = 20.0  # seconds for anything that waits on a loaded machine
WORK = 5.0  # seconds the mid-turn agent's turn takes: long enough to span the kill and the restart


def agent(roost: Roost, name: str, *flags: str) -> str:
    """A fake agent in session ``name``, ready for a prompt; its ``%N``."""
    pane = roost.start(roost.fake_agent("--session", f"session-{name}", "--echo-reply", *flags), session=name)
    roost.wait_screen(pane, "fake agent ready", timeout=GENEROUS)
    return pane


def type_prompt(roost: Roost, pane: str, text: str) -> None:
    roost.tmux("send-keys", "-t", pane, "-l", text)
    roost.tmux("send-keys", "-t", pane, "Enter")


def badge(roost: Roost, pane: str, word: str) -> None:
    roost.wait_for(lambda: roost.option(pane, "@roost-state") == word, GENEROUS, f"{pane} badged {word}")


def ours(daemon: Daemon, roost: Roost) -> dict[str, dict[str, Any]]:
    """This test's sessions by pane (other agents on the machine are sessions too)."""
    return {
        r["tmux"]["pane"]: r
        for r in daemon.snapshot()["records"]
        if (r.get("tmux") or {}).get("socket") == roost.socket and r["liveness"] != "ended"
    }


def activities(daemon: Daemon, roost: Roost) -> dict[str, str]:
    return {pane: r["activity"] for pane, r in ours(daemon, roost).items()}


def test_kill_9_mid_turn_loses_nothing_a_client_relied_on(roost: Roost, daemon: Daemon) -> None:
    roost.env["ROSTERD_SOCKET"] = str(daemon.socket)  # the panes' hooks post their claims to it
    daemon.start()
    done = agent(roost, "done", "--work", "0")
    blocked = agent(roost, "blocked", "--work", "0", "--dialog-on", "deploy")
    busy = agent(roost, "busy", "--work", str(WORK))
    type_prompt(roost, done, "say hi")
    type_prompt(roost, blocked, "deploy it")
    badge(roost, done, "done")
    badge(roost, blocked, "blocked")
    type_prompt(roost, busy, "a long task")
    badge(roost, busy, "working")
    expected = {busy: "active", blocked: "needs_attention", done: "idle"}
    daemon.wait_for(lambda: activities(daemon, roost) == expected, GENEROUS, "the roster before the kill")

    with Events(daemon.unix(timeout=GENEROUS), "/changes") as stream:
        first = stream.next(GENEROUS)
        assert first.name == "snapshot"
        epoch, _, seq = first.id.partition(":")
    before = ours(daemon, roost)
    assert daemon.stop(signal.SIGKILL) == -signal.SIGKILL

    spawned = time.monotonic()
    daemon.start()
    answered = time.monotonic()
    after = daemon.wait_for(
        lambda: (
            (found := ours(daemon, roost))
            and {p: r["activity"] for p, r in found.items()} == expected
            and found
        ),
        GENEROUS,
        "the roster after the restart",
    )
    whole = time.monotonic()
    print(
        f"spawn to first answer {(answered - spawned) * 1000:.0f} ms; first answer to whole roster "
        f"{(whole - answered) * 1000:.0f} ms; rebuild {daemon.get('/status')['rebuild']['ms']} ms"
    )
    assert whole - answered < RESTART_BOUND
    assert daemon.get("/status")["rebuild"]["ms"] < RESTART_BOUND * 1000
    assert {p: r["session_key"] for p, r in after.items()} == {p: r["session_key"] for p, r in before.items()}
    assert after[blocked]["pending"]["summary"] == "Bash: npm test"  # the dialog's reason
    assert roost.option(busy, "@roost-state") == "working", "the turn ended before the restart: raise WORK"

    path = f"/changes?since={seq}&status_epoch={epoch}"
    with Events(daemon.unix(timeout=GENEROUS), path) as stream:
        resumed = stream.next(GENEROUS)
        assert resumed.name == "snapshot"
        assert resumed.data["status_epoch"] != int(epoch)
        rows = {(r.get("tmux") or {}).get("pane"): r for r in resumed.data["snapshot"]["records"]}
        assert {pane: rows[pane]["activity"] for pane in expected} == expected
        key = after[busy]["session_key"]
        finished = stream.until("activity", GENEROUS, key)
        while finished.data["record"]["activity"] != "idle":
            finished = stream.until("activity", GENEROUS, key)
    assert finished.data["record"]["activity_event"] in ("Stop", "done"), finished.data
    assert finished.data["seq"] > resumed.data["seq"]

    read = roost.run("read", busy)
    assert read.returncode == 0, read.stderr
    assert "reply to: a long task" in read.stdout
