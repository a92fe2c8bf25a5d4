"""``roost events``: what writes a line, resuming by cursor, --follow, exit codes, where it lives."""

from __future__ import annotations

import json
import queue
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.cli.roost.inpane import ROOST, Shell

FIELDS = [
    "schema",
    "ts",
    "server",
    "pane",
    "window",
    "session_id",
    "event",
    "from",
    "to",
    "turn",
    "reason",
    "cursor",
]
DECLINED = "the dialog was declined or dismissed"


def events(roost, *args: str, env: dict[str, str] | None = None) -> list[dict]:
    proc = roost.run("events", *args, env=env)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def key(roost) -> str:
    return roost.tmux("display-message", "-p", "#{start_time}-#{pid}").strip()


def window_of(roost, pane: str) -> str:
    return roost.tmux("display-message", "-p", "-t", pane, "#{window_id}").strip()


def log_dir(roost) -> Path:
    return roost.root / "state" / "roost" / "panes" / "events"


def type_line(roost, pane: str, text: str) -> None:
    roost.tmux("send-keys", "-t", pane, "-l", text)
    roost.tmux("send-keys", "-t", pane, "Enter")


def wait_lines(roost, predicate, what: str, timeout: float = 20) -> list[dict]:
    return roost.wait_for(
        lambda: (lambda lines: lines if predicate(lines) else None)(events(roost)), timeout, what
    )


def closed(pane: str):
    return lambda lines: any(x["pane"] == pane and x["event"] == "closed" for x in lines)


def only_hook(roost, hook: str) -> None:
    """Unset roost's other reconcile hooks, so a closed line proves this one fired."""
    assert "events --reconcile" in roost.tmux("show-hooks", "-g", hook) + roost.tmux(
        "show-hooks", "-gw", hook
    )
    for other in {"pane-exited", "after-kill-pane", "window-unlinked", "session-closed"} - {hook}:
        roost.tmux("set-hook", "-gu", other)


# what writes a line


def test_a_turn_writes_two_state_lines_with_every_field(roost, tmp_path):
    roost.start("sh")
    pane = roost.window("api", roost.fake_agent("--session", "sess-7", "--reply", "secret-reply-text"))
    roost.wait_screen(pane, "fake agent ready")
    type_line(roost, pane, "secret-prompt-text")
    roost.wait_for(lambda: roost.option(pane, "@roost-state") == "done", what="done")
    lines = events(roost)
    assert [list(x) for x in lines] == [FIELDS, FIELDS]
    first, second = lines
    common = {"schema": 1, "server": key(roost), "pane": pane, "window": window_of(roost, pane)}
    assert first == {
        **common,
        "ts": first["ts"],
        "session_id": "sess-7",
        "event": "state",
        "from": None,
        "to": "working",
        "turn": 1,
        "reason": "",
        "cursor": first["cursor"],
    }
    assert (second["event"], second["from"], second["to"], second["turn"]) == ("state", "working", "done", 1)
    assert abs(first["ts"] - time.time()) < 60 and isinstance(first["ts"], int)
    assert first["cursor"] != second["cursor"] and first["cursor"].count(":") == 2
    text = (log_dir(roost) / "log.jsonl").read_text()
    assert "secret-prompt-text" not in text and "secret-reply-text" not in text


def test_blocked_then_a_second_dialog_is_blocked_on(roost):
    shell = Shell.open(roost)
    shell.run("state", "blocked", "Bash: one")
    shell.run("state", "blocked", "Bash: two")
    shell.run("state", "blocked", "Bash: two")  # changes nothing: writes nothing
    lines = events(roost)
    assert [(x["event"], x["from"], x["to"], x["reason"]) for x in lines] == [
        ("state", None, "blocked", "Bash: one"),
        ("blocked_on", "blocked", "blocked", "Bash: two"),
    ]


def test_error_reason_is_logged(roost):
    shell = Shell.open(roost)
    shell.run("state", "working")
    shell.run("state", "error", "API Error: 400")
    last = events(roost)[-1]
    assert (last["event"], last["from"], last["to"], last["reason"], last["turn"]) == (
        "state",
        "working",
        "error",
        "API Error: 400",
        1,
    )


def test_a_declined_dialog_cleared_by_roost_is_blocked_to_null(roost, tmp_path):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    roost.start("sh")
    pane = roost.window("api", roost.fake_agent("--transcript", str(transcript), "--dialog-on", "DIALOG"))
    roost.wait_screen(pane, "fake agent ready")
    type_line(roost, pane, "please DIALOG")
    roost.wait_for(lambda: roost.option(pane, "@roost-state") == "blocked", what="blocked")
    time.sleep(1.2)  # the decline must land measurably after the dialog opened
    roost.tmux("send-keys", "-t", pane, "Escape")
    roost.wait_for(lambda: "declined" in transcript.read_text(), what="declined")
    # `send`, `read` and `wait-done` clear a declined 🛑 through this one function.
    code = (
        "import sys; from roost.pane.tmux.server import Server; from roost.pane.state import panestate as p; "
        "s = Server.from_env(); sys.exit(0 if p.clear_if_declined(s, p.read(s, sys.argv[1])) else 1)"
    )
    assert subprocess.run([sys.executable, "-c", code, pane], env=roost.env).returncode == 0
    lines = [x for x in events(roost) if x["pane"] == pane]
    assert [(x["event"], x["from"], x["to"]) for x in lines] == [
        ("state", None, "working"),
        ("state", "working", "blocked"),
        ("state", "blocked", None),
    ]
    assert lines[1]["reason"] == "Bash: npm test"
    assert (lines[2]["reason"], lines[2]["turn"]) == (DECLINED, 1)


def test_closed_when_the_panes_program_exits(roost):
    roost.start("sh")
    shell = Shell.open(roost, "agent")
    shell.run("state", "working")
    roost.tmux("split-window", "-d", "-t", shell.pane, "sh")  # the window outlives the pane
    only_hook(roost, "pane-exited")
    type_line(roost, shell.pane, "exit")
    lines = wait_lines(roost, closed(shell.pane), "closed after exit")
    last = lines[-1]
    assert last == {
        "schema": 1,
        "ts": last["ts"],
        "server": key(roost),
        "pane": shell.pane,
        "window": lines[0]["window"],
        "session_id": None,
        "event": "closed",
        "from": "working",
        "to": None,
        "turn": None,
        "reason": "",
        "cursor": last["cursor"],
    }


def test_closed_when_the_agent_exits(roost):
    roost.start("sh")
    pane = roost.window("api", roost.fake_agent())
    roost.wait_screen(pane, "fake agent ready")
    type_line(roost, pane, "hi")
    roost.wait_for(lambda: roost.option(pane, "@roost-state") == "done", what="done")
    type_line(roost, pane, "/exit")
    lines = wait_lines(roost, closed(pane), "closed after /exit")
    assert (lines[-1]["from"], lines[-1]["session_id"]) == ("done", "fake-session-1")


def test_closed_after_kill_pane(roost):
    roost.start("sh")
    shell = Shell.open(roost, "agent")
    shell.run("state", "done")
    roost.tmux("split-window", "-d", "-t", shell.pane, "sh")  # the window outlives the pane
    only_hook(roost, "after-kill-pane")
    roost.tmux("kill-pane", "-t", shell.pane)
    wait_lines(roost, closed(shell.pane), "closed after kill-pane")


def test_closed_after_kill_window(roost):
    roost.start("sh")
    shell = Shell.open(roost, "agent")
    shell.run("state", "blocked", "Bash: ls")
    only_hook(roost, "window-unlinked")
    roost.tmux("kill-window", "-t", window_of(roost, shell.pane))
    lines = wait_lines(roost, closed(shell.pane), "closed after kill-window")
    assert lines[-1]["from"] == "blocked"


def test_closed_after_kill_session(roost):
    roost.start("sh")
    roost.start("sh", session="other")
    shell = Shell(roost, roost.tmux("list-panes", "-t", "other", "-F", "#{pane_id}").strip())
    shell.run("state", "idle")
    only_hook(roost, "session-closed")
    roost.tmux("kill-session", "-t", "other")
    wait_lines(roost, closed(shell.pane), "closed after kill-session")


def test_one_closed_line_per_pane_however_many_reconciles(roost):
    roost.start("sh")
    shells = [Shell.open(roost, f"a{n}") for n in range(3)]
    for shell in shells:
        shell.run("state", "working")
    roost.tmux("kill-window", "-t", window_of(roost, shells[0].pane))
    roost.tmux("kill-window", "-t", window_of(roost, shells[1].pane))
    procs = [subprocess.Popen([ROOST, "events", "--reconcile"], env=roost.env) for _ in range(6)]
    assert [p.wait(timeout=60) for p in procs] == [0] * 6
    wait_lines(roost, lambda lines: closed(shells[0].pane)(lines) and closed(shells[1].pane)(lines), "closed")
    time.sleep(1)  # let the hooks' own reconciles finish too
    lines = events(roost)
    assert sum(x["event"] == "closed" for x in lines) == 2
    assert not closed(shells[2].pane)(lines)


def test_a_plain_shell_gets_no_closed_line(roost):
    roost.start("sh")
    shell = Shell.open(roost, "agent")
    shell.run("state", "working")
    pane = roost.window("plain", "sh")
    roost.tmux("kill-pane", "-t", pane)
    roost.tmux("kill-pane", "-t", shell.pane)
    wait_lines(roost, closed(shell.pane), "agent closed")
    assert all(x["pane"] != pane for x in events(roost))


def test_reconcile_is_quiet_without_server_or_log(roost):
    for env in ({}, {"ROOST_EVENTS": ""}):
        proc = roost.run("events", "--reconcile", env=env)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_reconcile_takes_no_other_option(roost):
    proc = roost.run("events", "--reconcile", "--follow")
    assert proc.returncode == 1 and proc.stderr.startswith("usage: roost events")


# resuming and filtering


def _four_lines(roost) -> tuple[Shell, list[dict]]:
    shell = Shell.open(roost)
    for word in ("working", "idle", "working", "done"):
        shell.run("state", word)
    lines = events(roost)
    assert len(lines) == 4
    return shell, lines


def test_since_prints_exactly_the_lines_after(roost):
    _, lines = _four_lines(roost)
    for n, line in enumerate(lines):
        assert events(roost, "--since", line["cursor"]) == lines[n + 1 :]


def test_since_then_new_lines_nothing_twice(roost):
    shell, lines = _four_lines(roost)
    shell.run("state", "working")
    after = events(roost, "--since", lines[-1]["cursor"])
    assert [(x["from"], x["to"]) for x in after] == [("done", "working")]
    assert events(roost, "--since", after[-1]["cursor"]) == []


def test_pane_filter(roost):
    a, b = Shell.open(roost, "a"), Shell.open(roost, "b")
    a.run("state", "working")
    b.run("state", "blocked", "x")
    a.run("state", "done")
    assert [x["to"] for x in events(roost, "--pane", a.pane)] == ["working", "done"]
    assert [x["to"] for x in events(roost, "--pane", b.pane)] == ["blocked"]
    assert events(roost, "--pane", "%999") == []
    first = events(roost)[0]["cursor"]
    assert [x["to"] for x in events(roost, "--since", first, "--pane", a.pane)] == ["done"]


def test_only_this_servers_lines(roost):
    shell = Shell.open(roost)
    shell.run("state", "working")
    old = events(roost)
    roost.tmux("kill-server")
    shell = Shell.open(roost)
    assert events(roost) == []
    shell.run("state", "done")
    lines = events(roost)
    assert len(lines) == 1 and lines[0]["server"] != old[0]["server"]
    assert events(roost, "--since", old[0]["cursor"]) == lines


def test_rotation_keeps_the_newest_and_a_rotated_cursor_exits_3(roost):
    roost.env["ROOST_EVENTS_KEEP"] = "4"
    shell = Shell.open(roost)
    shell.run("state", "working")
    first = events(roost)[0]["cursor"]
    loop = "for i in 1 2 3 4 5 6; do roost state idle; roost state working; done"
    assert shell.run("-c", loop, program="sh").returncode == 0
    lines = events(roost)
    assert 4 <= len(lines) <= 5
    assert (lines[-1]["from"], lines[-1]["to"]) == ("idle", "working")
    raw = (log_dir(roost) / "log.jsonl").read_text().splitlines()
    assert 4 <= len(raw) <= 5
    proc = roost.run("events", "--since", first)
    assert (proc.returncode, proc.stdout) == (3, "")
    assert proc.stderr.startswith("roost events: cursor ") and "no longer in the log" in proc.stderr
    assert events(roost, "--since", lines[0]["cursor"]) == lines[1:]


def test_cursor_gone_after_forget_all(roost):
    _, lines = _four_lines(roost)
    assert roost.run("forget", "--all").returncode == 0
    proc = roost.run("events", "--since", lines[1]["cursor"])
    assert (proc.returncode, proc.stdout) == (3, "")
    assert events(roost) == []


# exit codes


def test_no_server_exits_2(roost):
    for args in ((), ("--follow",), ("--since", "1-1:1:1")):
        proc = roost.run("events", *args)
        assert (proc.returncode, proc.stdout) == (2, "")
        assert proc.stderr == f"roost events: no roost server is running on socket '{roost.socket}'\n"


@pytest.mark.parametrize(
    "args",
    [
        ("--since", "nonsense"),
        ("--since", "a:b:c"),
        ("--since", ""),
        ("--since",),
        ("--pane", "3"),
        ("--pane",),
        ("--json",),
        ("extra",),
    ],
)
def test_usage_and_bad_cursor_exit_1(roost, args):
    roost.start("sh")
    proc = roost.run("events", *args)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.startswith("usage: roost events")


@pytest.mark.parametrize("env", [{"ROOST_EVENTS": ""}, {"ROOST_RECORD_DIR": ""}])
def test_log_off_exits_1(roost, env):
    roost.env.update(env)
    shell = Shell.open(roost)
    shell.run("state", "working")
    proc = roost.run("events")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.startswith("roost events: the events log is off")
    assert not log_dir(roost).exists()


def test_events_dir_with_records_off_is_on_and_turn_is_null(roost, tmp_path):
    roost.env.update(ROOST_RECORD_DIR="", ROOST_EVENTS=str(tmp_path / "ev"))
    shell = Shell.open(roost)
    shell.run("state", "working")
    lines = events(roost)
    assert [(x["to"], x["turn"]) for x in lines] == [("working", None)]
    assert (tmp_path / "ev" / "log.jsonl").exists()


def test_log_is_private(roost):
    shell = Shell.open(roost)
    shell.run("state", "working")
    directory = log_dir(roost)
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE((directory / "log.jsonl").stat().st_mode) == 0o600


# --follow


class Follower:
    """``roost events --follow`` in the background, its stdout lines gathered as they come."""

    def __init__(self, roost, *args: str) -> None:
        self.proc = subprocess.Popen(
            [ROOST, "events", "--follow", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=roost.env,
            text=True,
        )
        self.lines: queue.Queue[dict] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for raw in self.proc.stdout:
            self.lines.put(json.loads(raw))

    def next(self, timeout: float = 15) -> dict:
        return self.lines.get(timeout=timeout)

    def end(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def test_follow_prints_new_lines_and_ends_when_the_server_stops(roost):
    shell = Shell.open(roost)
    shell.run("state", "working")
    follower = Follower(roost)
    try:
        assert follower.next()["to"] == "working"
        shell.run("state", "blocked", "Bash: rm")
        assert (follower.next()["to"], follower.lines.empty()) == ("blocked", True)
        shell.run("state", "done")
        roost.tmux("kill-server")
        assert follower.proc.wait(timeout=20) == 0
        assert follower.next(timeout=5)["to"] == "done"  # the last line, printed before it ended
        assert follower.lines.empty()
        assert "stopped" in follower.proc.stderr.read()
    finally:
        follower.end()


def test_follow_since_resumes_without_repeats(roost):
    shell, lines = _four_lines(roost)
    follower = Follower(roost, "--since", lines[1]["cursor"], "--pane", shell.pane)
    try:
        assert [follower.next()["cursor"] for _ in range(2)] == [x["cursor"] for x in lines[2:]]
        shell.run("state", "working")
        assert follower.next()["from"] == "done"
        time.sleep(1.5)  # three more checks: nothing is printed twice
        assert follower.lines.empty()
    finally:
        follower.end()


def test_follow_exits_3_when_the_log_is_cleared(roost):
    shell = Shell.open(roost)
    shell.run("state", "working")
    follower = Follower(roost)
    try:
        follower.next()
        assert roost.run("forget", "--all").returncode == 0
        assert follower.proc.wait(timeout=20) == 3
    finally:
        follower.end()


def test_follow_ends_quietly_when_its_reader_goes_away(roost):
    shell = Shell.open(roost)
    shell.run("state", "working")
    proc = subprocess.Popen(
        [ROOST, "events", "--follow"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=roost.env
    )
    try:
        assert json.loads(proc.stdout.readline())["to"] == "working"
        proc.stdout.close()  # like `| head -1`
        shell.run("state", "done")
        assert proc.wait(timeout=20) == 0
        assert proc.stderr.read() == b""
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
