"""A hook's blocked ends when its dialog leaves the screen, with nobody running a command.

The pane runs ``tests/fakes/screen_tui.py``: it shows Claude Code's recorded screens and fires
Claude's hooks (through the real ``rosterd-hook``) when told, as a child of the pane's own
process, so the hook's claim and the screen's are about one session. What is checked is what
everyone reads: the roster's record and change stream, ``explain``, the pane's badge (what
``roost status`` reads) and the events log.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from roost.pane.state.panestate import DECLINED
from roost.truth.roster.attention import DRAWING
from tests.api.sse import Events
from tests.conftest import BIN, Roost
from tests.daemon.fixture import Daemon
from tests.fakes.push_service import PushService

TUI = Path(__file__).resolve().parents[1] / "fakes" / "screen_tui.py"
BOUND = 1.0
"""Seconds from a dialog leaving the screen to the roster and the badge saying so."""
HOLD = 2.0
"""Seconds a dialog that must stay blocked is watched for."""
GENEROUS = 10.0


@pytest.fixture
def tui(roost: Roost, daemon: Daemon) -> Iterator[str]:
    """A running daemon and the fake TUI's pane, whose hooks reach that daemon."""
    roost.env["XDG_RUNTIME_DIR"] = str(daemon.runtime)
    daemon.start()
    pane = roost.start(shlex.join([sys.executable, str(TUI), "idle"]), session="tui")
    roost.wait_screen(pane, "? for shortcuts")
    read_by_daemon(roost, daemon, pane)
    yield pane


def read_by_daemon(roost: Roost, daemon: Daemon, pane: str) -> None:
    """Wait until the daemon has read the pane's screen (a session for it, at rest), drawing it
    again while not: its first frame can go by before the daemon attaches to a new tmux server.
    Then the hooks' claims join that session, as they do when an agent starts in a watched pane."""
    deadline = time.monotonic() + GENEROUS
    while (found := record(daemon, pane)) is None or found["activity"] != "idle":
        assert time.monotonic() < deadline, f"the daemon never read {pane}"
        tell(roost, pane, "show idle")
        time.sleep(0.3)


def tell(roost: Roost, pane: str, line: str) -> float:
    roost.tmux("send-keys", "-t", pane, "-l", line)
    roost.tmux("send-keys", "-t", pane, "Enter")
    return time.monotonic()


def record(daemon: Daemon, pane: str) -> dict[str, Any] | None:
    return daemon.record_where(
        lambda r: (r.get("tmux") or {}).get("pane") == pane and r["liveness"] != "ended"
    )


def until(daemon: Daemon, pane: str, activity: str, timeout: float = GENEROUS) -> dict[str, Any]:
    try:
        found: dict[str, Any] = daemon.wait_for(
            lambda: (r := record(daemon, pane)) is not None and r["activity"] == activity and r,
            timeout,
            f"{pane} {activity}",
        )
    except AssertionError as error:
        raise AssertionError(f"{error}; the roster has {daemon.snapshot()['records']}") from None
    return found


def open_dialog(roost: Roost, daemon: Daemon, pane: str, screen: str = "permission") -> dict[str, Any]:
    """The agent works, then asks: the hook says blocked and the dialog is drawn."""
    tell(roost, pane, "hook UserPromptSubmit")
    until(daemon, pane, "active")
    tell(roost, pane, "hook PermissionRequest Bash touch x")
    tell(roost, pane, f"show {screen}")
    roost.wait_for(lambda: roost.option(pane, "@roost-state") == "blocked", GENEROUS, "the blocked badge")
    blocked = until(daemon, pane, "needs_attention")
    assert source(daemon, blocked["session_key"]) == "hook"
    return blocked


def source(daemon: Daemon, key: str) -> str:
    return daemon.get(f"/sessions/{key}/explain")["fields"]["activity"]["source"]


def events_log(roost: Roost, pane: str) -> list[dict[str, Any]]:
    proc = roost.run("events", "--pane", pane)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def stays_blocked(roost: Roost, daemon: Daemon, pane: str, seconds: float = HOLD) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        now = record(daemon, pane)
        assert now is not None, "the session went"
        if now["activity"] != "needs_attention":
            explain = daemon.get(f"/sessions/{now['session_key']}/explain")
            raise AssertionError(f"{now['activity']} by {explain['fields']['activity']}: {explain}")
        assert roost.option(pane, "@roost-state") == "blocked"
        time.sleep(0.05)


def test_a_declined_dialog_ends_blocked_everywhere_within_a_second(
    roost: Roost, daemon: Daemon, tui: str
) -> None:
    blocked = open_dialog(roost, daemon, tui)
    key = blocked["session_key"]
    with Events(daemon.unix(timeout=GENEROUS), f"/changes?since={daemon.get('/snapshot')['seq']}") as stream:
        closed = tell(roost, tui, "show declined")
        cleared = None
        while cleared is None:
            assert time.monotonic() - closed < GENEROUS, "no attention_cleared"
            frame = stream.next(GENEROUS)
            if frame.name == "attention_cleared" and frame.data["record"]["session_key"] == key:
                cleared = time.monotonic() - closed
        assert cleared <= BOUND, f"the roster took {cleared:.2f} s"
    roost.wait_for(lambda: roost.option(tui, "@roost-state") == "", BOUND, "the badge to clear")
    after = record(daemon, tui)
    assert after is not None
    assert (after["activity"], after["activity_event"], after["pending"]) == ("idle", "dialog_closed", None)
    last = events_log(roost, tui)[-1]
    assert (last["event"], last["from"], last["to"], last["reason"]) == ("state", "blocked", None, DECLINED)
    status = roost.json("status", "--json")
    [row] = [p for p in status["panes"] if p["id"] == tui]
    assert row["state"] is None
    explain = daemon.get(f"/sessions/{key}/explain")
    [overruled] = explain["overruled"]
    assert overruled["source"] == "hook"
    assert overruled["by"]["source"] == "screen"
    assert "the dialog left the screen" in overruled["evidence"]
    told = subprocess.run(
        [str(BIN / "rosterd"), "explain", key], capture_output=True, text=True, env=daemon.env, timeout=30
    )
    assert told.returncode == 0, told.stderr
    [line] = [line for line in told.stdout.splitlines() if "the dialog left the screen" in line]
    # The hook's word reaches the roster twice: its own claim (event PermissionRequest, with
    # its place in the hook's order) and the daemon's reading of the badge it wrote (event
    # permission); whichever came last is named.
    assert line.split()[0] == "hook", line
    said = overruled["ended"]
    named = f"seq {said['seq']} event PermissionRequest" if said["seq"] is not None else "event permission"
    assert f"(hook {named} activity blocked at " in line, line


def test_an_approved_command_that_runs_on_reads_working(roost: Roost, daemon: Daemon, tui: str) -> None:
    """Claude fires nothing between the approval and the command's end: the screen says it works."""
    open_dialog(roost, daemon, tui)
    tell(roost, tui, "show working-approved-command")
    until(daemon, tui, "active", timeout=BOUND + 0.5)
    roost.wait_for(lambda: roost.option(tui, "@roost-state") == "working", BOUND, "the badge to read working")
    last = events_log(roost, tui)[-1]
    assert (last["from"], last["to"]) == ("blocked", "working")


@pytest.mark.parametrize(
    "dialog", ["permission", "blocked-write-long-diff", "blocked-question", "blocked-second-dialog"]
)
def test_an_open_dialog_stays_blocked_when_it_redraws(
    roost: Roost, daemon: Daemon, tui: str, dialog: str
) -> None:
    open_dialog(roost, daemon, tui, dialog)
    for _ in range(3):
        tell(roost, tui, f"show {dialog}")
        time.sleep(0.3)
    roost.tmux("resize-window", "-t", tui, "-x", "100", "-y", "30")
    stays_blocked(roost, daemon, tui)


def test_a_moment_without_the_dialog_is_not_an_answer(roost: Roost, daemon: Daemon, tui: str) -> None:
    """A frame between two dialogs (the first approved, the next one drawing) ends nothing."""
    open_dialog(roost, daemon, tui)
    tell(roost, tui, "show working")
    time.sleep(0.15)
    tell(roost, tui, "show blocked-second-dialog")
    stays_blocked(roost, daemon, tui)


def test_a_dialog_not_yet_drawn_is_not_gone(roost: Roost, daemon: Daemon, tui: str) -> None:
    """The hook fires before the dialog is drawn: the screen still shows the agent working."""
    tell(roost, tui, "hook UserPromptSubmit")
    tell(roost, tui, "show working")
    until(daemon, tui, "active")
    tell(roost, tui, "hook PermissionRequest Bash touch x")
    until(daemon, tui, "needs_attention")
    stays_blocked(roost, daemon, tui)


def test_a_dialog_declined_while_the_daemon_was_down_ends_when_it_looks(
    roost: Roost, daemon: Daemon, tui: str
) -> None:
    open_dialog(roost, daemon, tui)
    daemon.stop()
    tell(roost, tui, "show declined")
    time.sleep(0.5)
    assert roost.option(tui, "@roost-state") == "blocked"
    daemon.start()
    until(daemon, tui, "idle")
    roost.wait_for(lambda: roost.option(tui, "@roost-state") == "", BOUND, "the badge to clear")
    key = record(daemon, tui)["session_key"]  # type: ignore[index]
    [overruled] = daemon.get(f"/sessions/{key}/explain")["overruled"]
    said = ("drew the agent at rest", "before the daemon was watching")
    assert any(why in overruled["evidence"] for why in said), overruled


def test_a_dialog_approved_while_the_daemon_was_down_ends_when_it_looks(
    roost: Roost, daemon: Daemon, tui: str
) -> None:
    """The approved command still runs when the daemon comes back: nothing on screen says the
    dialog left, but a word older than the daemon's watch (by more than a dialog takes to draw)
    whose screen shows no dialog was answered."""
    open_dialog(roost, daemon, tui)
    daemon.stop()
    tell(roost, tui, "show working-approved-command")
    time.sleep(DRAWING + 0.2)
    daemon.start()
    until(daemon, tui, "active")
    roost.wait_for(lambda: roost.option(tui, "@roost-state") == "working", BOUND, "the badge to read working")
    key = record(daemon, tui)["session_key"]  # type: ignore[index]
    [overruled] = daemon.get(f"/sessions/{key}/explain")["overruled"]
    assert "before the daemon was watching" in overruled["evidence"]


def test_a_screen_roost_cannot_read_keeps_the_hooks_word(roost: Roost, daemon: Daemon, tui: str) -> None:
    """Nothing the manifest reads is on screen: no evidence either way, so blocked stays."""
    open_dialog(roost, daemon, tui)
    tell(roost, tui, "say nothing any rule of Claude's reads")
    stays_blocked(roost, daemon, tui)


def test_a_late_reminder_of_an_approved_dialog_ends_while_the_command_runs(
    roost: Roost, daemon: Daemon, tui: str
) -> None:
    """Claude Code sends its permission Notification on a timer, even after the person approved
    on screen (measured: 12 s later, while the approved command ran): the badge must not go
    back to blocked over a working agent."""
    open_dialog(roost, daemon, tui)
    tell(roost, tui, "show working-approved-command")
    until(daemon, tui, "active", timeout=BOUND + 0.5)
    key = record(daemon, tui)["session_key"]  # type: ignore[index]
    tell(roost, tui, "hook Notification permission_prompt")
    tell(roost, tui, "show working-approved-command")  # the spinner goes on drawing

    def late() -> list[dict[str, Any]]:
        overruled = daemon.get(f"/sessions/{key}/explain")["overruled"]
        return [o for o in overruled if o["ended"]["event"] == "Notification:permission_prompt"]

    # The pane reads active before the reminder as well as after it, so what says the hook's
    # word has been heard and answered is the reminder among the overruled.
    try:
        daemon.wait_for(late, BOUND + 1, "the reminder ended")
    except AssertionError:
        raise AssertionError(daemon.get(f"/sessions/{key}/explain")) from None
    until(daemon, tui, "active", timeout=BOUND)
    roost.wait_for(lambda: roost.option(tui, "@roost-state") == "working", BOUND, "the badge to read working")
    [reminder] = late()
    assert "reminds of a dialog already drawn" in reminder["evidence"], reminder


def test_a_late_reminder_over_a_still_screen_is_looked_at(roost: Roost, daemon: Daemon, tui: str) -> None:
    """Declined, then the reminder: the screen sits still at the prompt and writes nothing, so
    nothing but the word itself can make the daemon look again."""
    open_dialog(roost, daemon, tui)
    tell(roost, tui, "show declined")
    key = until(daemon, tui, "idle")["session_key"]
    tell(roost, tui, "hook Notification permission_prompt")

    def reminder_ended() -> bool:
        overruled = daemon.get(f"/sessions/{key}/explain")["overruled"]
        return any(o["ended"]["event"] == "Notification:permission_prompt" for o in overruled)

    try:
        daemon.wait_for(reminder_ended, BOUND + 1, "the reminder ended")
    except AssertionError:
        raise AssertionError(daemon.get(f"/sessions/{key}/explain")) from None
    until(daemon, tui, "idle", timeout=BOUND)
    roost.wait_for(lambda: roost.option(tui, "@roost-state") == "", BOUND, "the badge to clear")


def test_a_dialog_answered_before_the_reader_looked_ends_blocked(
    roost: Roost, daemon: Daemon, tui: str
) -> None:
    """The dialog is drawn and declined in one breath, so no reading ever shows it: the agent
    drawn at rest after the hook's word is the evidence."""
    tell(roost, tui, "hook UserPromptSubmit")
    tell(roost, tui, "show working")
    until(daemon, tui, "active")
    tell(roost, tui, "hook PermissionRequest Bash touch x")
    until(daemon, tui, "needs_attention")
    tell(roost, tui, "show declined")
    key = record(daemon, tui)["session_key"]  # type: ignore[index]
    try:
        until(daemon, tui, "idle", timeout=BOUND + 0.5)
    except AssertionError:
        raise AssertionError(daemon.get(f"/sessions/{key}/explain")) from None
    [ended] = daemon.get(f"/sessions/{key}/explain")["overruled"]
    assert "drew the agent at rest" in ended["evidence"], ended


def test_a_push_pending_for_the_dialog_is_cancelled_and_no_done_follows(
    roost: Roost, daemon: Daemon, tui: str
) -> None:
    """Declined within the notification's grace second: the phone hears nothing at all."""
    service = PushService(daemon.get("/push/vapid-key")["key"])
    try:
        sub = service.subscription("phone")
        with daemon.unix() as client:
            assert client.post("/push/subscribe", json={**sub, "viewing": None}).status_code == 201
        tell(roost, tui, "hook UserPromptSubmit")
        until(daemon, tui, "active")
        tell(roost, tui, "hook PermissionRequest Bash touch x")
        tell(roost, tui, "show permission")
        until(daemon, tui, "needs_attention")
        tell(roost, tui, "show declined")
        until(daemon, tui, "idle")
        time.sleep(HOLD)
        assert service.pushes == []
    finally:
        service.close()


@pytest.fixture
def blind(roost: Roost, daemon: Daemon) -> Iterator[str]:
    """The fake TUI's pane, as an agent whose integration sees no dialog and no failed turn
    (Copilot CLI's and pi's extensions, Codex's hooks on an API error): a user manifest says so."""
    agents = Path(roost.env["XDG_CONFIG_HOME"]) / "roost" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "claude.toml").write_text("[hook]\nreports_dialogs = false\nreports_failures = false\n")
    roost.env["XDG_RUNTIME_DIR"] = str(daemon.runtime)
    daemon.start()
    pane = roost.start(shlex.join([sys.executable, str(TUI), "idle"]), session="tui")
    roost.wait_screen(pane, "? for shortcuts")
    read_by_daemon(roost, daemon, pane)
    tell(roost, pane, "hook UserPromptSubmit")
    roost.wait_for(lambda: roost.option(pane, "@roost-state") == "working", GENEROUS, "the working badge")
    until(daemon, pane, "active")
    yield pane


def test_the_screen_badges_a_dialog_the_integration_cannot_see(
    roost: Roost, daemon: Daemon, blind: str
) -> None:
    tell(roost, blind, "show permission")
    roost.wait_for(lambda: roost.option(blind, "@roost-state") == "blocked", BOUND, "the blocked badge")
    assert roost.option(blind, "@roost-reason") == "Bash: touch x"
    blocked = until(daemon, blind, "needs_attention", timeout=BOUND)
    assert blocked["pending"]["summary"] == "Bash: touch x"
    refused = roost.run("send", blind, "are you there")
    assert refused.returncode == 3, refused.stderr
    tell(roost, blind, "show declined")
    roost.wait_for(lambda: roost.option(blind, "@roost-state") == "", BOUND + 0.5, "the badge to clear")
    until(daemon, blind, "idle", timeout=BOUND)
    moves = [(e["from"], e["to"], e["reason"]) for e in events_log(roost, blind) if e["event"] == "state"]
    assert moves[-2:] == [("working", "blocked", "Bash: touch x"), ("blocked", None, DECLINED)]


def test_the_screen_ends_a_turn_the_integration_cannot_report_failed(
    roost: Roost, daemon: Daemon, blind: str
) -> None:
    tell(roost, blind, "show error")
    roost.wait_for(lambda: roost.option(blind, "@roost-state") == "error", BOUND + 0.5, "the error badge")
    assert "400" in roost.option(blind, "@roost-reason")
    assert until(daemon, blind, "idle", timeout=BOUND)["error_reason"] == roost.option(blind, "@roost-reason")
    assert roost.run("wait-done", blind, "5").returncode == 1


def test_an_integration_that_sees_dialogs_keeps_its_own_word(roost: Roost, daemon: Daemon, tui: str) -> None:
    """Claude reports its dialogs: a dialog on screen while its hook says working is not the
    screen's to badge (its hook's blocked is on the way, with the hook's own reason)."""
    tell(roost, tui, "hook UserPromptSubmit")
    until(daemon, tui, "active")
    tell(roost, tui, "show permission")
    time.sleep(HOLD)
    assert roost.option(tui, "@roost-state") == "working"
