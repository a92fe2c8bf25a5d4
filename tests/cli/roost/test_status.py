"""``roost status [--json]``: every field, the no-server case, both socket kinds, one tmux call."""

from __future__ import annotations

import subprocess
import tempfile
import time

import pytest

from tests.cli.roost.inpane import counting_tmux
from tests.contracts.tables import table

HUMAN = {row["internal"]: row["a person reads"] for row in table("One state, three vocabularies")}
"""What a person reads for each state (docs/contracts.md)."""

PANE_KEYS = [
    "id",
    "session",
    "window_id",
    "window_index",
    "window_name",
    "pane_index",
    "name",
    "command",
    "state",
    "since",
    "session_id",
    "cwd",
    "harness",
    "transcript",
    "worktree",
    "branch",
    "dead",
    "exit_status",
    "exit_signal",
    "spend",
    "budget",
]


def _pane(doc: dict, pane_id: str) -> dict:
    return next(p for p in doc["panes"] if p["id"] == pane_id)


def test_no_server(roost):
    proc = roost.run("status", "--json")
    assert proc.returncode == 0
    assert proc.stderr == ""
    assert roost.json("status", "--json") == {
        "schema": 1,
        "command": "status",
        "running": False,
        "socket": roost.socket,
        "socket_kind": "path",
        "sessions": [],
        "panes": [],
    }


def test_plain_shell_pane_has_four_identity_nulls(roost):
    pane = roost.start("sh", window="shell")
    doc = roost.json("status", "--json")
    assert list(doc)[:2] == ["schema", "command"]
    assert (doc["running"], doc["socket"], doc["socket_kind"]) == (True, roost.socket, "path")
    entry = _pane(doc, pane)
    assert sorted(entry) == sorted(PANE_KEYS)
    window_id = roost.tmux("display-message", "-p", "-t", pane, "#{window_id}").strip()
    assert entry == {
        "id": pane,
        "session": "main",
        "window_id": window_id,
        "window_index": 1,
        "window_name": "shell",
        "pane_index": 1,
        "name": None,
        "command": "sh",
        "state": None,
        "since": None,
        "session_id": None,
        "cwd": None,
        "harness": None,
        "transcript": None,
        "worktree": None,
        "branch": None,
        "dead": False,
        "exit_status": None,
        "exit_signal": None,
        "spend": None,
        "budget": None,
    }


def test_agent_pane_fields(roost, tmp_path):
    roost.start()
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    pane = roost.window(
        "api", roost.fake_agent("--start-hook", "--session", "sess-42", "--transcript", str(transcript))
    )
    roost.wait_for(lambda: roost.option(pane, "@roost-session-id"), what="SessionStart identified the pane")
    roost.tmux("set-option", "-p", "-t", pane, "@roost-name", "worker")
    roost.wait_screen(pane, "fake agent ready")
    before = int(time.time())
    roost.tmux("send-keys", "-t", pane, "-l", "hello")
    roost.tmux("send-keys", "-t", pane, "Enter")
    roost.wait_for(lambda: roost.option(pane, "@roost-state") == "done", what="done")
    entry = _pane(roost.json("status", "--json"), pane)
    command = roost.tmux("display-message", "-p", "-t", pane, "#{pane_current_command}").strip()
    assert entry["command"] == command
    assert entry["name"] == "worker"
    assert entry["window_name"] == "api"
    assert (entry["window_index"], entry["pane_index"]) == (2, 1)
    assert entry["window_id"].startswith("@")
    assert entry["state"] == "done"
    assert isinstance(entry["since"], int) and before - 1 <= entry["since"] <= int(time.time())
    assert entry["session_id"] == "sess-42"
    assert entry["cwd"].startswith("/")
    assert entry["harness"] == "claude"
    assert entry["transcript"] == str(transcript)


def test_identity_stays_after_the_agent_exits(roost):
    roost.start()
    pane = roost.window("api", f"{roost.fake_agent('--start-hook')}; exec sh")
    roost.wait_for(lambda: roost.option(pane, "@roost-harness"), what="identified")
    roost.wait_screen(pane, "fake agent ready")
    roost.tmux("send-keys", "-t", pane, "-l", "/exit")
    roost.tmux("send-keys", "-t", pane, "Enter")
    roost.wait_for(lambda: _pane(roost.json("status", "--json"), pane)["command"] == "sh", what="back at sh")
    entry = _pane(roost.json("status", "--json"), pane)
    assert (entry["session_id"], entry["harness"]) == ("fake-session-1", "claude")


def test_sessions_fields(roost):
    roost.start(session="main")
    roost.window("two", "sh")
    roost.start(session="other")
    doc = roost.json("status", "--json")
    assert doc["sessions"] == [
        {"name": "main", "windows": 2, "attached_clients": 0},
        {"name": "other", "windows": 1, "attached_clients": 0},
    ]
    assert {p["session"] for p in doc["panes"]} == {"main", "other"}


def test_attached_clients_counts_a_client(roost):
    roost.start(session="main")
    client = subprocess.Popen(
        ["script", "-qfc", f"tmux -S {roost.socket} attach -t main", "/dev/null"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**roost.env, "TERM": "xterm"},
    )
    try:
        roost.wait_for(
            lambda: roost.json("status", "--json")["sessions"][0]["attached_clients"] == 1,
            what="a client attached",
        )
    finally:
        client.kill()
        client.wait()


def test_socket_given_by_name(roost):
    tmpdir = tempfile.mkdtemp(prefix="rtn", dir="/tmp")
    env = {"ROOST_SOCKET": "roost-test", "TMUX_TMPDIR": tmpdir}
    try:
        assert roost.run("new", "-d", "-s", "main", env=env).returncode == 0
        doc = roost.json("status", "--json", env=env)
        assert (doc["running"], doc["socket"], doc["socket_kind"]) == (True, "roost-test", "name")
        assert [s["name"] for s in doc["sessions"]] == ["main"]
    finally:
        roost.run("kill", env=env)
        subprocess.run(["rm", "-rf", tmpdir])


def test_socket_name_without_server(roost):
    tmpdir = tempfile.mkdtemp(prefix="rtn", dir="/tmp")
    doc = roost.json("status", "--json", env={"ROOST_SOCKET": "nobody", "TMUX_TMPDIR": tmpdir})
    assert (doc["running"], doc["socket"], doc["socket_kind"]) == (False, "nobody", "name")


@pytest.mark.parametrize("windows", [1, 6])
def test_one_tmux_call_whatever_the_pane_count(roost, tmp_path, windows):
    roost.start()
    for n in range(1, windows):
        roost.window(f"w{n}", "sh")
    env, calls = counting_tmux(tmp_path / "wrap")
    doc = roost.json("status", "--json", env=env)
    assert len(doc["panes"]) == windows
    assert len(calls.read_text().splitlines()) == 1


def test_one_tmux_call_without_server(roost, tmp_path):
    env, calls = counting_tmux(tmp_path / "wrap")
    assert roost.json("status", "--json", env=env)["running"] is False
    assert len(calls.read_text().splitlines()) == 1


def test_plain_status_is_a_table_with_badges(roost):
    roost.start("sh", window="shell")
    pane = roost.window("api", "sh")
    roost.tmux("set-option", "-p", "-t", pane, "@roost-state", "working")
    proc = roost.run("status")
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert lines[0] == "main: 2 windows"
    row = next(line for line in lines if pane in line)
    assert "⏳" in row and "main:2.1" in row and "api" in row and "working" in row


def test_the_table_says_each_state_in_the_words_a_person_reads(roost):
    """The document keeps the machine word; the table says the one every face uses."""
    roost.start("sh", window="shell")
    said = {}
    for index, state in enumerate(("working", "blocked", "done", "idle", "error")):
        pane = roost.window(f"w{index}", "sh")
        roost.tmux("set-option", "-p", "-t", pane, "@roost-state", state)
        said[pane] = state
    lines = roost.run("status").stdout.splitlines()
    for pane, state in said.items():
        row = next(line for line in lines if f" {pane} " in line)
        assert row.endswith(f"(sh)  {HUMAN[state]}"), row
    assert {p["id"]: p["state"] for p in roost.json("status", "--json")["panes"] if p["state"]} == said
    assert "blocked" not in "\n".join(lines) and "needs input" in "\n".join(lines)


def test_plain_status_without_server(roost):
    proc = roost.run("status")
    assert proc.returncode == 0
    assert "no roost server" in proc.stdout


def test_status_refuses_other_arguments(roost):
    proc = roost.run("status", "--yaml")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.startswith("usage: roost status")


def test_no_tmux_at_all_is_no_server(roost, tmp_path):
    doc = roost.json("status", "--json", env={"PATH": str(tmp_path)})
    assert (doc["running"], doc["sessions"], doc["panes"]) == (False, [], [])
