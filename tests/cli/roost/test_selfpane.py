"""The verbs an agent runs about its own pane: whoami, state, reply, identify."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli.roost.inpane import ROOST, Shell, counting_tmux

IDENTITY = ("@roost-session-id", "@roost-cwd", "@roost-harness", "@roost-transcript-path")
GOOD = ["--session", "s-1", "--cwd", "/srv/api", "--harness", "mytool"]


@pytest.fixture
def shell(roost) -> Shell:
    return Shell.open(roost)


# whoami


def test_whoami_prints_own_pane(shell):
    proc = shell.run("whoami")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"{shell.pane}\n", "")


def test_whoami_json(shell):
    proc = shell.run("whoami", "--json")
    assert proc.returncode == 0
    assert json.loads(proc.stdout) == {"schema": 1, "command": "whoami", "pane": shell.pane}
    assert proc.stdout.count("\n") == 1


@pytest.mark.parametrize("args", [(), ("--json",)])
def test_whoami_outside_exits_1_with_empty_stdout(roost, args):
    roost.start()
    proc = roost.run("whoami", *args)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr == "roost whoami: not inside a roost pane\n"


def test_whoami_in_a_pane_of_another_server_is_outside(roost, tmp_path):
    pane = roost.start()
    other = f"{tmp_path}/other.sock,1,0"
    proc = roost.run("whoami", env={"TMUX": other, "TMUX_PANE": pane})
    assert (proc.returncode, proc.stdout) == (1, "")


def test_whoami_refuses_other_arguments(shell):
    proc = shell.run("whoami", "extra")
    assert proc.returncode == 1
    assert proc.stderr.startswith("usage: roost whoami")


# state


def test_state_sets_badge_and_since(roost, shell):
    proc = shell.run("state", "working")
    assert (proc.returncode, proc.stdout) == (0, "")
    assert roost.option(shell.pane, "@roost-state") == "working"
    assert roost.option(shell.pane, "@roost-since").isdigit()


@pytest.mark.parametrize("word", ["working", "blocked", "done", "idle", "error"])
def test_state_json_fields(roost, shell, word):
    doc = json.loads(shell.run("state", word, "--json").stdout)
    assert doc == {
        "schema": 1,
        "command": "state",
        "requested": word,
        "state": word,
        "pane": shell.pane,
        "recorded": True,
    }
    assert roost.option(shell.pane, "@roost-state") == word


def test_state_unknown_word_is_recorded_as_idle(roost, shell):
    shell.run("state", "working")
    doc = json.loads(shell.run("state", "bogus", "--json").stdout)
    assert (doc["requested"], doc["state"], doc["recorded"]) == ("bogus", "idle", True)
    assert roost.option(shell.pane, "@roost-state") == "idle"


def test_state_json_flag_first_still_means_idle(roost, shell):
    shell.run("state", "working")
    proc = shell.run("state", "--json")
    assert (proc.returncode, proc.stdout) == (0, "")
    assert roost.option(shell.pane, "@roost-state") == "idle"


def test_state_json_outside_roost(roost):
    roost.start()
    proc = roost.run("state", "done", "--json")
    assert proc.returncode == 0
    assert json.loads(proc.stdout) == {
        "schema": 1,
        "command": "state",
        "requested": "done",
        "state": None,
        "pane": None,
        "recorded": False,
    }


def test_state_outside_roost_and_without_server_exits_0(roost):
    proc = roost.run("state", "working")
    assert (proc.returncode, proc.stdout) == (0, "")


def test_state_without_word_is_usage(shell):
    proc = shell.run("state")
    assert proc.returncode == 1
    assert proc.stderr.startswith("usage: roost state")


def test_state_blocked_and_error_keep_a_reason(roost, shell):
    shell.run("state", "blocked", "Bash: npm test")
    assert roost.option(shell.pane, "@roost-reason") == "Bash: npm test"
    shell.run("state", "error", "API Error: 400")
    assert roost.option(shell.pane, "@roost-reason") == "API Error: 400"


# reply


def _kept(roost, pane: str, turn: int) -> Path:
    key = roost.tmux("display-message", "-p", "#{start_time}-#{pid}").strip()
    return roost.root / "state" / "roost" / "panes" / key / pane.lstrip("%") / "replies" / f"{turn:06d}"


def test_reply_is_kept_for_the_current_turn(roost, shell):
    shell.run("state", "working")
    assert shell.run("reply", "the tests pass").returncode == 0
    shell.run("state", "done")
    assert _kept(roost, shell.pane, 1).read_text() == "the tests pass"
    assert roost.option(shell.pane, "@roost-reply-turn") == "1"
    assert roost.option(shell.pane, "@roost-state") == "done"


def test_reply_from_stdin(roost, shell):
    shell.run("state", "working")
    shell.run("reply", "-", input="line one\nline two\n")
    assert _kept(roost, shell.pane, 1).read_text() == "line one\nline two\n"


def test_reply_over_12k_is_truncated_with_a_marker(roost, shell):
    shell.run("state", "working")
    shell.run("reply", input="x" * (12 * 1024 + 100))
    kept = _kept(roost, shell.pane, 1).read_bytes()
    assert kept.startswith(b"x" * 12 * 1024)
    assert kept.endswith(b"\n[roost: reply truncated, 100 more bytes dropped]")


def test_a_truncated_reply_is_cut_between_characters(roost, shell):
    """The cap falls inside an "é": that character goes whole, and clean text stays clean."""
    shell.run("state", "working")
    shell.run("reply", input="a" + "é" * 7000)  # 14001 bytes: byte 12288 is the second of an "é"
    kept = _kept(roost, shell.pane, 1).read_bytes()
    body, marker = kept.split(b"\n[roost: ")
    assert len(body) <= 12 * 1024
    assert body == ("a" + "é" * 6143).encode()
    assert marker == b"reply truncated, 1714 more bytes dropped]"
    shell.run("state", "done")
    doc = roost.json("read", "--json", shell.pane)
    assert (doc["lossy"], doc["text"]) == (False, kept.decode())


def test_reply_without_records_goes_to_the_pane_option(roost):
    roost.env["ROOST_RECORD_DIR"] = ""
    shell = Shell.open(roost)
    shell.run("state", "working")
    shell.run("reply", "kept on the pane")
    assert roost.option(shell.pane, "@roost-reply") == "kept on the pane"
    assert roost.option(shell.pane, "@roost-reply-turn") == ""


def test_reply_outside_roost_does_not_read_stdin(roost):
    """Outside roost it is a no-op: it must not wait for an stdin that never closes."""
    roost.start()
    proc = subprocess.Popen([ROOST, "reply"], stdin=subprocess.PIPE, env=roost.env)
    try:
        assert proc.wait(timeout=20) == 0
    finally:
        proc.kill()
        proc.stdin.close()


# identify


def test_identify_records_the_four_fields(roost, shell):
    proc = shell.run("identify", *GOOD, "--transcript", "/srv/log.jsonl")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert [roost.option(shell.pane, o) for o in IDENTITY] == ["s-1", "/srv/api", "mytool", "/srv/log.jsonl"]
    pane = next(p for p in roost.json("status", "--json")["panes"] if p["id"] == shell.pane)
    assert (pane["session_id"], pane["cwd"], pane["harness"], pane["transcript"]) == (
        "s-1",
        "/srv/api",
        "mytool",
        "/srv/log.jsonl",
    )


def test_identify_transcript_is_optional(roost, shell):
    assert shell.run("identify", *GOOD).returncode == 0
    assert roost.option(shell.pane, "@roost-transcript-path") == ""
    assert roost.option(shell.pane, "@roost-harness") == "mytool"


@pytest.mark.parametrize(
    "args",
    [
        ["--session", "", "--cwd", "/a", "--harness", "h"],
        ["--session", "a" * 129, "--cwd", "/a", "--harness", "h"],
        ["--session", "has space", "--cwd", "/a", "--harness", "h"],
        ["--session", "semi;colon", "--cwd", "/a", "--harness", "h"],
        ["--session", "s", "--cwd", "/a", "--harness", ""],
        ["--session", "s", "--cwd", "/a", "--harness", "Upper"],
        ["--session", "s", "--cwd", "/a", "--harness", "h" * 33],
        ["--session", "s", "--cwd", "/a", "--harness", "dot.ted"],
        ["--session", "s", "--cwd", "relative/dir", "--harness", "h"],
        ["--session", "s", "--cwd", "/two\nlines", "--harness", "h"],
        ["--session", "s", "--cwd", "/" + "d" * 1024, "--harness", "h"],
        ["--session", "s", "--cwd", "/a", "--harness", "h", "--transcript", "log.jsonl"],
        ["--session", "s", "--cwd", "/a", "--harness", "h", "--transcript", "/t" * 513],
        ["--session", "s", "--cwd", "/a"],
        ["--session", "s", "--harness", "h"],
        ["--cwd", "/a", "--harness", "h"],
        ["--session", "s", "--cwd", "/a", "--harness"],
        ["--session", "s", "--cwd", "/a", "--harness", "h", "--color", "red"],
        [],
    ],
)
def test_identify_refusals_exit_2_and_record_nothing(roost, shell, args):
    proc = shell.run("identify", *args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("roost identify: ") and proc.stderr.count("\n") == 1
    assert [roost.option(shell.pane, o) for o in IDENTITY] == ["", "", "", ""]


def test_identify_limits_are_inclusive(roost, shell):
    session, harness, cwd = "a" * 128, "h" * 32, "/" + "d" * 1023
    args = ["identify", "--session", session, "--cwd", cwd, "--harness", harness]
    assert shell.run(*args).returncode == 0
    assert roost.option(shell.pane, "@roost-session-id") == session
    assert roost.option(shell.pane, "@roost-cwd") == cwd
    assert (
        shell.run("identify", "--session", "a.b_c:d-E9", "--cwd", "/x", "--harness", "my_tool-2").returncode
        == 0
    )


def test_identify_again_costs_one_tmux_read_and_writes_nothing(roost, shell, tmp_path):
    env, calls = counting_tmux(tmp_path / "wrap")
    assert shell.run("identify", *GOOD, env=env).returncode == 0
    first = calls.read_text().splitlines()
    assert any("set-option" in c for c in first)
    calls.unlink()
    assert shell.run("identify", *GOOD, env=env).returncode == 0
    again = calls.read_text().splitlines()
    assert len(again) == 1 and "set-option" not in again[0]


def test_identify_outside_roost_does_nothing_and_exits_0(roost):
    pane = roost.start()
    proc = roost.run("identify", *GOOD)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert roost.option(pane, "@roost-session-id") == ""
