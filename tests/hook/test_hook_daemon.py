"""``rosterd-hook`` posting its claim to the daemon: to a real one, to none, to one that hangs.

The hook is run by this test process, so the "agent" its claim names is this process (the
hook's nearest ancestor that is not a shell); one test runs it the way an agent does, from the
fake agent in a pane. Times are printed: the hook's cost with and without a daemon.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from roost.faces.hook.post import TIMEOUT
from roost.truth.roster.times import from_wire
from tests.conftest import BIN, Roost
from tests.daemon.fixture import Daemon, daemon, pid_start_ticks, running
from tests.fakes.model_api import QUESTION
from tests.hook.test_hook import events_logged, hook, settled, slow_tmux

__all__ = ["daemon", "running"]  # the daemon fixtures, for this directory has no conftest of its own

BOUND = 0.8  # the contract: exit 0 within 800 ms, whatever the daemon does
WIRE = 0.001  # a wire timestamp is rounded to the millisecond


def run_hook(
    roost: Roost, pane: str, payload: dict[str, Any], env: dict[str, str], prefix: tuple[str, ...] = ()
) -> tuple[subprocess.CompletedProcess[bytes], float]:
    full_env = {**roost.env, "TMUX": f"{roost.socket},1,0", "TMUX_PANE": pane, **env}
    began = time.monotonic()
    proc = subprocess.run(
        [*prefix, str(BIN / "rosterd-hook")],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=full_env,
        timeout=20,
    )
    took = time.monotonic() - began
    settled(roost)  # what a handed-off event still had to do is done before the test reads on
    return proc, took


def event(name: str, **fields: object) -> dict[str, Any]:
    return {"hook_event_name": name, "session_id": "sess-1", "cwd": "/tmp", **fields}


@pytest.fixture
def pane(roost: Roost) -> str:
    return roost.start("sh")


def mine(daemon: Daemon) -> dict[str, Any] | None:
    """The session the hook's claims name: this test process, the hook's parent."""
    return daemon.record_where(lambda r: r["pid"] == os.getpid())


def test_the_hook_posts_its_claim_and_the_roster_shows_it_at_once(
    roost: Roost, running: Daemon, pane: str
) -> None:
    with running.unix() as client:
        client.get("/status")  # a warm connection, so the time below is the roster's, not httpx's
        began = time.time()
        proc, took = run_hook(roost, pane, event("UserPromptSubmit", prompt="hi"), running.env)
        finished = time.monotonic()
        records = client.get("/snapshot").json()["records"]
        seen = time.monotonic() - finished
    record = next((r for r in records if r["pid"] == os.getpid()), None)  # the first look finds it
    assert proc.returncode == 0 and took < BOUND
    assert record is not None, running.snapshot()
    # At once: the roster took the claim while the hook ran, not after it (the look's own time is
    # the machine's load, so it is printed below, not bounded).
    received = from_wire(record["activity_at"])
    assert received is not None and began - WIRE <= received <= began + took + WIRE
    assert (record["activity"], record["activity_event"]) == ("active", "UserPromptSubmit")
    assert (record["session_id"], record["cwd"], record["harness"]) == ("sess-1", "/tmp", "claude")
    assert record["start_ticks"] == pid_start_ticks(os.getpid())
    assert record["sources"] == ["hook"]
    assert roost.option(pane, "@roost-state") == "working"  # the pane was stamped as before
    print(f"hook with a daemon: {took * 1000:.0f} ms; claim shown {seen * 1000:.0f} ms after it exited")

    # Run through a shell, as Claude Code runs hooks: the shell is skipped, the session is the same.
    notification = event("Notification", notification_type="permission_prompt", message="allow?")
    proc, _ = run_hook(roost, pane, notification, running.env, prefix=("sh", "-c", '"$0"; true'))
    assert proc.returncode == 0
    again = mine(running)
    assert again is not None and again["session_key"] == record["session_key"]
    assert (again["activity"], again["activity_event"]) == (
        "needs_attention",
        "Notification:permission_prompt",
    )
    run_hook(roost, pane, event("Stop", last_assistant_message="done."), running.env)
    done = mine(running)
    assert done is not None and (done["activity"], done["activity_event"]) == ("idle", "Stop")
    assert done["completed_revision"] is not None
    explain = running.get(f"/sessions/{record['session_key']}/explain")
    assert explain["fields"]["activity"]["source"] == "hook"


def test_a_question_dialogs_claim_names_the_question(roost: Roost, running: Daemon, pane: str) -> None:
    """Claude's AskUserQuestion fires PermissionRequest like a tool's: the roster's pending
    request (what the web app shows) says what is asked, as the badge does."""
    asks = event(
        "PermissionRequest",
        permission_mode="default",
        tool_name="AskUserQuestion",
        tool_input={"questions": [QUESTION]},
    )
    run_hook(roost, pane, event("UserPromptSubmit", prompt="pick a colour"), running.env)
    proc, took = run_hook(roost, pane, asks, running.env)
    assert proc.returncode == 0 and took < BOUND
    summary = "AskUserQuestion: Which colour should the button be?"
    assert roost.option(pane, "@roost-reason") == summary
    record = mine(running)
    assert record is not None
    assert (record["activity"], record["activity_event"]) == ("needs_attention", "PermissionRequest")
    pending = record["pending"]
    assert (pending["summary"], pending["tool"], pending["answerable"]) == (summary, "AskUserQuestion", False)
    # The notification Claude sends about the same dialog keeps the question, as the badge does,
    # and it is the same request (its id, its opening time).
    notice = event("Notification", notification_type="elicitation_dialog", message="Claude needs your input")
    run_hook(roost, pane, notice, running.env)
    record = mine(running)
    assert record is not None and record["activity_event"] == "Notification:elicitation_dialog"
    assert record["pending"] == pending
    run_hook(roost, pane, event("PostToolUse", tool_name="AskUserQuestion"), running.env)
    record = mine(running)
    assert record is not None and (record["activity"], record["pending"]) == ("active", None)


def test_events_that_say_nothing_new_post_nothing(roost: Roost, running: Daemon, pane: str) -> None:
    for quiet in (
        event("PreToolUse", tool_name="Bash"),
        event("Notification", notification_type="idle_prompt"),
    ):
        proc, _ = run_hook(roost, pane, quiet, running.env)
        assert proc.returncode == 0
    assert mine(running) is None
    run_hook(roost, pane, event("SessionStart", source="compact"), running.env)
    started = mine(running)
    assert started is not None
    assert (started["activity"], started["session_id"]) == ("unknown", "sess-1")  # identity, no activity
    run_hook(roost, pane, event("SessionStart", source="startup"), running.env)
    ready = mine(running)
    assert ready is not None and ready["activity"] == "idle"  # at its prompt: promptable at once
    assert ready["activity_event"] == "SessionStart:startup"


def test_a_fake_agents_hooks_reach_the_roster_as_its_own_process(roost: Roost, daemon: Daemon) -> None:
    """End to end: the agent runs in a pane whose server has the daemon's runtime dir."""
    daemon.start()
    pane = roost.start("sh")
    roost.tmux("set-environment", "-g", "XDG_RUNTIME_DIR", str(daemon.runtime))
    agent = roost.tmux(
        "new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "main:", roost.fake_agent("--session", "fake-9")
    ).strip()
    roost.wait_screen(agent, "fake agent ready")
    roost.tmux("send-keys", "-t", agent, "hello", "Enter")

    def stopped() -> dict[str, Any] | None:
        return daemon.record_where(lambda r: r["session_id"] == "fake-9" and r["activity_event"] == "Stop")

    record = daemon.wait_for(stopped, 15, "the agent's Stop claim")
    assert "agent.py" in Path(f"/proc/{record['pid']}/cmdline").read_text()  # the agent, not its hook
    assert record["activity"] == "idle" and "hook" in record["sources"]
    assert record["tmux"] is None or record["tmux"]["pane"] == agent
    assert roost.option(pane, "@roost-state") == ""  # nobody else's pane was touched


@pytest.mark.alone  # timed against the hook's deadline
def test_an_event_handed_off_still_lands_before_the_next(
    roost: Roost, running: Daemon, pane: str, tmp_path: Path
) -> None:
    """A slow ``UserPromptSubmit`` is handed off, and the agent's ``PermissionRequest`` comes
    while the copy is still at work: the dialog's event waits for it, so the pane and the
    roster end on the dialog, not on the prompt that came before it."""
    slow = {**running.env, "PATH": f"{slow_tmux(tmp_path, 0.5)}{os.pathsep}{roost.env['PATH']}"}
    began = time.monotonic()
    prompt = hook(roost, pane, event("UserPromptSubmit"), env=slow, settle=False)
    assert prompt.returncode == 0 and time.monotonic() - began < BOUND
    assert roost.option(pane, "@roost-state") == ""  # the copy is still at it
    asked = event("PermissionRequest", tool_name="Bash", tool_input={"command": "touch x"})
    proc, took = run_hook(roost, pane, asked, running.env)
    assert proc.returncode == 0 and took < BOUND
    assert roost.option(pane, "@roost-state") == "blocked"
    assert [(e["from"], e["to"]) for e in events_logged(roost)] == [(None, "working"), ("working", "blocked")]
    record = mine(running)
    assert record is not None and (record["activity"], record["activity_event"]) == (
        "needs_attention",
        "PermissionRequest",
    )
    explain = running.get(f"/sessions/{record['session_key']}/explain")
    assert explain["rejected"] == []  # taken in order, so the roster refused nothing


def test_a_claim_older_than_its_hooks_last_is_refused(roost: Roost, running: Daemon, pane: str) -> None:
    """What a late event would tell the roster, where no pane orders it (an agent outside
    tmux): the hook's number says it is older, and the roster keeps the newer word."""
    asked = event("PermissionRequest", tool_name="Bash", tool_input={"command": "touch x"})
    run_hook(roost, pane, asked, running.env)
    record = mine(running)
    assert record is not None and record["activity"] == "needs_attention"
    key = record["session_key"]
    newer = running.get(f"/sessions/{key}/explain")["fields"]["activity"]["claim"]["seq"]
    late = {
        "source": "hook",
        "pid": os.getpid(),
        "start_ticks": pid_start_ticks(os.getpid()),
        "fields": {"harness": "claude"},
        "event": "UserPromptSubmit",
        "activity": "working",
        "seq": newer - 1,
    }
    with running.unix() as client:
        answer = client.post("/claim", json=late)
    assert answer.status_code == 409, answer.text
    assert answer.json()["error"] == f"out of order: hook seq {newer - 1} is older than {newer}"
    after = mine(running)
    assert after is not None and after["revision"] == record["revision"]  # nothing changed
    [refused] = running.get(f"/sessions/{key}/explain")["rejected"]
    assert refused["reason"] == f"out of order: hook seq {newer - 1} is older than {newer}"


@pytest.fixture
def silent() -> Iterator[tuple[str, list[bytes]]]:
    """A socket that accepts connections, reads what is sent, and never answers."""
    directory = tempfile.mkdtemp(prefix="rs", dir="/tmp")
    path = os.path.join(directory, "rosterd.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen()
    received: list[bytes] = []
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            held.append(conn)
            conn.settimeout(5)
            data = b""
            try:
                while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) < body_length(data):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            except OSError:
                pass
            received.append(data)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path, received
    listener.close()
    for conn in held:
        conn.close()
    os.unlink(path)
    os.rmdir(directory)


def boot_microseconds() -> int:
    return time.clock_gettime_ns(time.CLOCK_BOOTTIME) // 1000


def body_length(data: bytes) -> int:
    for line in data.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":", 1)[1])
    return 0


def test_a_daemon_that_never_answers_costs_the_hook_its_post_timeout_only(
    roost: Roost, pane: str, silent: tuple[str, list[bytes]]
) -> None:
    path, received = silent
    before = boot_microseconds()
    proc, took = run_hook(roost, pane, event("UserPromptSubmit"), {"ROSTERD_SOCKET": path})
    after = boot_microseconds()
    assert proc.returncode == 0
    assert TIMEOUT <= took < BOUND
    assert roost.option(pane, "@roost-state") == "working"
    print(f"hook with a daemon that never answers: {took * 1000:.0f} ms")
    [request] = received
    head, body = request.split(b"\r\n\r\n", 1)
    assert head.startswith(b"POST /claim HTTP/1.1\r\n")
    claim = json.loads(body)
    assert claim == {
        "source": "hook",
        "pid": os.getpid(),
        "start_ticks": pid_start_ticks(os.getpid()),
        "ancestors": claim["ancestors"],
        "fields": {"harness": "claude", "session_id": "sess-1", "cwd": "/tmp"},
        "event": "UserPromptSubmit",
        "activity": "working",
        "seq": claim["seq"],
    }
    assert before < claim["seq"] < after  # the hook's start on the boot clock: its place in order
    assert claim["ancestors"][0] == [os.getppid(), pid_start_ticks(os.getppid())]


@pytest.mark.alone  # timed against the hook's deadline
def test_with_no_daemon_the_hook_posts_nothing_and_stays_fast(roost: Roost, pane: str) -> None:
    proc, took = run_hook(roost, pane, event("UserPromptSubmit"), {})
    assert proc.returncode == 0 and took < BOUND
    assert roost.option(pane, "@roost-state") == "working"
    print(f"hook with no daemon: {took * 1000:.0f} ms")
    gone = {"ROSTERD_SOCKET": str(roost.root / "run" / "nobody-listens.sock")}
    Path(gone["ROSTERD_SOCKET"]).touch()  # a file that is not a socket: connect fails at once
    proc, took = run_hook(roost, pane, event("Stop"), gone)
    assert proc.returncode == 0 and took < BOUND
    assert roost.option(pane, "@roost-state") == "done"


def test_the_hook_measured_against_a_bare_interpreter(roost: Roost, running: Daemon, pane: str) -> None:
    """Not a bound beyond 800 ms, a record of what posting costs: median of a few runs each."""

    def median(times: list[float]) -> float:
        return sorted(times)[len(times) // 2]

    def bare_start() -> float:
        began = time.monotonic()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        return time.monotonic() - began

    bare = median([bare_start() for _ in range(7)])
    without = median([run_hook(roost, pane, event("PostToolUse"), {})[1] for _ in range(7)])
    posting = median([run_hook(roost, pane, event("PostToolUse"), running.env)[1] for _ in range(7)])
    print(f"python -c pass {bare * 1000:.0f} ms; hook without a daemon {without * 1000:.0f} ms", end="")
    print(f"; with one {posting * 1000:.0f} ms")
    assert without < BOUND and posting < BOUND


def test_an_agent_outside_roosts_tmux_is_in_the_roster_by_its_hook(roost: Roost, running: Daemon) -> None:
    """An agent started in any terminal, no tmux at all: its hook still reaches the roster."""
    env = {k: v for k, v in {**roost.env, **running.env}.items() if not k.startswith("TMUX")}
    proc = subprocess.run(
        [str(BIN / "rosterd-hook")],
        input=json.dumps(event("UserPromptSubmit", session_id="outside-1")).encode(),
        capture_output=True,
        env=env,
        timeout=20,
    )
    assert proc.returncode == 0
    record = running.wait_for(lambda: mine(running), 5, "the outside agent's session")
    assert (record["activity"], record["session_id"], record["harness"]) == ("active", "outside-1", "claude")
    assert record["tmux"] is None
    assert record["sources"] == ["hook"]


def test_a_turns_reply_is_the_records_recap_and_is_always_writable(
    roost: Roost, running: Daemon, pane: str
) -> None:
    """A script reads a pane's last reply from the record, as a headless session's; a reply
    that is not valid Unicode or is longer than a claim holds still ends the turn."""
    run_hook(roost, pane, event("UserPromptSubmit", prompt="go"), running.env)
    run_hook(roost, pane, event("Stop", last_assistant_message="3 passed\nall green"), running.env)
    done = mine(running)
    assert done is not None and (done["activity"], done["recap"]) == ("idle", "3 passed\nall green")
    cases = (("bad \ud800 half", "bad ? half"), ("x" * 70_000, "x" * 65_536), ("😀" * 70_000, "😀" * 65_536))
    for reply, kept in cases:
        run_hook(roost, pane, event("UserPromptSubmit", prompt="again"), running.env)
        run_hook(roost, pane, event("Stop", last_assistant_message=reply), running.env)
        record = mine(running)
        assert record is not None and (record["activity"], record["recap"]) == ("idle", kept)


def test_no_recap_is_kept_when_the_config_says_so(roost: Roost, daemon: Daemon, pane: str) -> None:
    daemon.settings["runner"] = {"recap": False}
    daemon.start()
    run_hook(roost, pane, event("UserPromptSubmit", prompt="go"), daemon.env)
    run_hook(roost, pane, event("Stop", last_assistant_message="private words"), daemon.env)
    done = mine(daemon)
    assert done is not None and (done["activity"], done["recap"]) == ("idle", None)


def test_the_claim_names_the_session_after_its_pane_at_once(roost: Roost, running: Daemon, pane: str) -> None:
    """The process scan would name it too, seconds later: a script that looks the session up by
    name right after it starts must find it."""
    roost.tmux("set-option", "-p", "-t", pane, "@roost-name", "pusher")
    run_hook(roost, pane, event("SessionStart", source="startup"), running.env)
    named = mine(running)
    assert named is not None and named["name"] == "pusher"
    roost.tmux("set-option", "-p", "-t", pane, "@roost-name", "x" * 201)  # too long for a claim: not claimed
    run_hook(roost, pane, event("UserPromptSubmit", prompt="go"), running.env)
    working = mine(running)
    assert working is not None and (working["activity"], working["name"]) == ("active", "pusher")
