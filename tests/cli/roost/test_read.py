"""``roost read``: the kept reply byte for byte, the screen fallback, staleness, --json, --render."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli.roost.inpane import ROOST, Shell
from tests.conftest import BIN, Roost

FALLBACK = "roost read: no recorded reply for '{}' — showing the pane's screen instead.\n"
JSON_FIELDS = {
    "schema",
    "command",
    "target",
    "pane",
    "source",
    "state",
    "stale",
    "error_reason",
    "turn",
    "text",
    "lossy",
    "sent_by",
}


def raw(roost: Roost, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """``roost ARGS`` with stdout and stderr as bytes, for byte-for-byte checks."""
    return subprocess.run(
        [str(BIN / "roost"), *args], capture_output=True, env={**roost.env, **(env or {})}, timeout=60
    )


def agent(roost: Roost, name: str, *flags: str) -> str:
    """A fake agent in its own window of session main (a shell session is started first)."""
    if not roost.tmux("list-sessions", "-F", "x", check=False):
        roost.start()
    pane = roost.window(name, roost.fake_agent(*flags))
    roost.wait_screen(pane, "fake agent ready")
    return pane


def prompt(roost: Roost, pane: str, text: str) -> None:
    roost.tmux("send-keys", "-t", pane, "-l", text)
    roost.tmux("send-keys", "-t", pane, "Enter")


def turn(roost: Roost, pane: str, text: str, state: str = "done") -> None:
    """Submit ``text`` and wait until the turn it starts has ended in ``state``."""
    before = int(roost.option(pane, "@roost-turn") or 0)
    prompt(roost, pane, text)
    roost.wait_for(
        lambda: (
            int(roost.option(pane, "@roost-turn") or 0) > before
            and roost.option(pane, "@roost-state") == state
        ),
        timeout=20,
        what=f"{pane} {state} after {text!r}",
    )


def set_state(roost: Roost, pane: str, state: str, reason: str | None = None) -> None:
    roost.tmux("set-option", "-p", "-t", pane, "@roost-state", state)
    if reason is not None:
        roost.tmux("set-option", "-p", "-t", pane, "@roost-reason", reason)


def kept_dir(roost: Roost, pane: str) -> Path:
    key = roost.tmux("display-message", "-p", "#{start_time}-#{pid}").strip()
    return roost.root / "state" / "roost" / "panes" / key / pane.lstrip("%") / "replies"


def test_kept_reply_is_printed_byte_for_byte(roost: Roost) -> None:
    reply = "Tests pass.\n\n  two *lint* warnings <T> in `src/api.ts`\ncafé ✓"
    pane = agent(roost, "api", "--reply", reply)
    turn(roost, pane, "run the tests")
    for target in (pane, "api"):
        proc = raw(roost, "read", target)
        assert proc.returncode == 0
        assert proc.stdout == reply.encode()  # nothing added, not even a newline
        assert proc.stderr == b""
    # The line count describes the screen only: a reply is never cut.
    assert raw(roost, "read", pane, "1").stdout == reply.encode()


@pytest.mark.parametrize("kept", [b"0123456789", b"ends in a newline\n", b"two\n\n"])
def test_plain_read_adds_nothing_to_the_reply(roost: Roost, kept: bytes) -> None:
    """Ten bytes kept are ten bytes printed, by plain read and by --turn: no newline is added,
    and one the reply ends in is not doubled."""
    shell = Shell.open(roost)
    script = f"{ROOST} state working && {ROOST} reply - && {ROOST} state done"
    assert shell.run("-c", script, program="sh", input=kept.decode()).returncode == 0
    assert (kept_dir(roost, shell.pane) / "000001").read_bytes() == kept
    for args in ((), ("--turn", "1")):
        proc = raw(roost, "read", *args, shell.pane)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, kept, b""), args


def test_turn_reads_that_kept_turn(roost: Roost) -> None:
    pane = agent(roost, "api", "--echo-reply")
    turn(roost, pane, "one")
    turn(roost, pane, "two")
    assert roost.run("read", pane).stdout == "reply to: two"
    assert roost.run("read", "--turn", "1", pane).stdout == "reply to: one"
    doc = roost.json("read", "--json", "--turn", "1", pane)
    assert (doc["turn"], doc["text"], doc["source"]) == (1, "reply to: one", "reply")
    missing = roost.run("read", "--turn", "3", pane)
    assert missing.returncode == 1
    assert missing.stdout == ""
    assert "turn 3" in missing.stderr and missing.stderr.startswith("roost read: ")
    for bad in ("0", "abc", "-1", ""):
        refused = roost.run("read", "--turn", bad, pane)
        assert refused.returncode == 1, bad
        assert refused.stderr.startswith("usage:") and "--turn" in refused.stderr


def test_screen_fallback_says_so_on_stderr(roost: Roost) -> None:
    pane = roost.start("sh")
    roost.tmux("send-keys", "-t", pane, "clear; for i in 1 2 3 4 5; do echo line$i; echo; done", "Enter")
    roost.wait_screen(pane, "line5")
    proc = roost.run("read", pane)
    assert proc.returncode == 0
    assert proc.stderr == FALLBACK.format(pane)
    assert "line5" in proc.stdout
    three = roost.run("read", pane, "3").stdout.splitlines()
    assert three[:2] == ["line4", "line5"] and len(three) == 3
    doc = roost.json("read", "--json", pane, "2")
    assert doc["source"] == "screen"
    assert doc["text"].startswith("line5\n")
    assert (doc["turn"], doc["sent_by"], doc["stale"], doc["state"]) == (None, None, False, None)


@pytest.mark.parametrize("late", ["--render", "-r", "--json", "-5"])
def test_flag_in_the_lines_slot_is_refused(roost: Roost, late: str) -> None:
    pane = roost.start("sh")
    proc = roost.run("read", pane, late)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.startswith("usage:") and late in proc.stderr


@pytest.mark.parametrize("lines", ["0", "abc", "1.5", "+3"])
def test_lines_must_be_a_positive_whole_number(roost: Roost, lines: str) -> None:
    pane = roost.start("sh")
    proc = roost.run("read", pane, lines)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.startswith("usage:")


def test_usage_errors(roost: Roost) -> None:
    pane = roost.start("sh")
    for args in (
        [],
        ["--bogus", pane],
        [pane, "3", "extra"],
        ["--json", "--render", pane],
        ["-r", "--json", pane],
    ):
        proc = roost.run("read", *args)
        assert (proc.returncode, proc.stdout) == (1, ""), args
        assert proc.stderr.startswith("usage:"), args


def test_missing_target_exits_2_with_nothing_on_stdout(roost: Roost) -> None:
    roost.start("sh")
    for args in (["%999"], ["--json", "nosuch"]):
        proc = roost.run("read", *args)
        assert (proc.returncode, proc.stdout) == (2, ""), args
        assert proc.stderr.startswith("roost read: ")


@pytest.mark.parametrize(("state", "said"), [("working", "is working"), ("blocked", "needs input")])
def test_busy_pane_marks_the_reply_stale(roost: Roost, state: str, said: str) -> None:
    pane = agent(roost, "api", "--reply", "old answer")
    turn(roost, pane, "go")
    set_state(roost, pane, state)
    proc = roost.run("read", pane)
    assert proc.stdout == "old answer"
    assert proc.stderr == f"roost read: '{pane}' {said} — this reply is from an earlier turn.\n"
    doc = roost.json("read", "--json", pane)
    assert (doc["stale"], doc["state"], doc["source"], doc["error_reason"]) == (True, state, "reply", None)


def test_errored_turn_keeps_the_old_reply_marked_stale(roost: Roost) -> None:
    pane = agent(roost, "api", "--echo-reply", "--error-on", "fail")
    turn(roost, pane, "first")
    turn(roost, pane, "please fail", state="error")
    proc = roost.run("read", pane)
    assert proc.returncode == 0
    assert proc.stdout == "reply to: first"
    assert "is in error state: API Error: 400" in proc.stderr
    assert "earlier turn" in proc.stderr
    doc = roost.json("read", "--json", pane)
    assert doc["state"] == "error"
    assert doc["stale"] is True
    assert doc["error_reason"] == "API Error: 400"
    assert (doc["turn"], doc["text"], doc["source"]) == (1, "reply to: first", "reply")


def test_error_reason_is_named_on_the_screen_fallback_too(roost: Roost) -> None:
    pane = roost.start("sh")
    set_state(roost, pane, "error", "the API refused")
    proc = roost.run("read", pane)
    assert proc.stderr.splitlines() == [
        FALLBACK.format(pane).rstrip("\n"),
        f"roost read: '{pane}' is in error state: the API refused",
    ]
    doc = roost.json("read", "--json", pane)
    assert (doc["source"], doc["stale"], doc["error_reason"]) == ("screen", False, "the API refused")


def test_silent_turn_clears_the_reply(roost: Roost) -> None:
    pane = agent(roost, "api", "--echo-reply", "--silent-on", "quiet")
    turn(roost, pane, "hello")
    assert roost.run("read", pane).stdout == "reply to: hello"
    turn(roost, pane, "be quiet")
    proc = roost.run("read", pane)
    assert proc.stderr == FALLBACK.format(pane)
    doc = roost.json("read", "--json", pane)
    assert (doc["source"], doc["turn"], doc["state"], doc["stale"]) == ("screen", None, "done", False)


def test_json_document_has_every_field(roost: Roost) -> None:
    pane = agent(roost, "api", "--reply", "Tests pass.")
    turn(roost, pane, "run the tests")
    (kept_dir(roost, pane) / "000001.sent_by").write_text("pane:%1")
    proc = roost.run("read", "--json", "api")
    assert proc.returncode == 0 and proc.stderr == ""
    assert len(proc.stdout.splitlines()) == 1
    doc = json.loads(proc.stdout)
    assert set(doc) == JSON_FIELDS
    assert list(doc)[:2] == ["schema", "command"]
    assert doc == {
        "schema": 1,
        "command": "read",
        "target": "api",
        "pane": pane,
        "source": "reply",
        "state": "done",
        "stale": False,
        "error_reason": None,
        "turn": 1,
        "text": "Tests pass.",
        "lossy": False,
        "sent_by": "pane:%1",
    }
    (kept_dir(roost, pane) / "000001.sent_by").unlink()
    assert roost.json("read", "--json", pane)["sent_by"] is None


def test_invalid_utf8_is_printed_raw_and_marked_lossy_in_json(roost: Roost) -> None:
    shell = Shell.open(roost)
    script = (
        f"{ROOST} state working && printf 'caf\\303\\251 \\377 end' | {ROOST} reply - && {ROOST} state done"
    )
    assert shell.run("-c", script, program="sh").returncode == 0
    proc = raw(roost, "read", shell.pane)
    assert proc.stdout == b"caf\xc3\xa9 \xff end"
    assert proc.stderr == b""
    doc = roost.json("read", "--json", shell.pane)
    assert doc["text"] == "café \ufffd end"
    assert doc["lossy"] is True
    assert (doc["source"], doc["turn"], doc["sent_by"]) == ("reply", 1, None)


def test_window_target_reads_its_agent_pane(roost: Roost) -> None:
    shell = roost.start("sh", window="duo")
    pane = roost.tmux(
        "split-window",
        "-d",
        "-P",
        "-F",
        "#{pane_id}",
        "-t",
        shell,
        roost.fake_agent("--reply", "from the agent"),
    ).strip()
    roost.wait_screen(pane, "fake agent ready")
    turn(roost, pane, "go")
    assert roost.run("read", "duo").stdout == "from the agent"
    assert roost.json("read", "--json", "duo")["pane"] == pane


def test_read_clears_a_declined_dialog(roost: Roost, tmp_path: Path) -> None:
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text("")
    pane = agent(roost, "api", "--dialog-on", "perm", "--transcript", str(transcript))
    prompt(roost, pane, "needs perm")
    roost.wait_for(lambda: roost.option(pane, "@roost-state") == "blocked", timeout=20)
    time.sleep(1.2)  # the dialog's opening time is kept in whole seconds
    roost.tmux("send-keys", "-t", pane, "Escape")
    roost.wait_for(lambda: "declined" in transcript.read_text())
    doc = roost.json("read", "--json", pane)
    assert doc["state"] is None
    assert roost.option(pane, "@roost-state") == ""


def test_replies_in_the_pane_option_when_recording_is_off(roost: Roost) -> None:
    roost.env["ROOST_RECORD_DIR"] = ""
    pane = agent(roost, "api", "--reply", "kept in tmux\nsecond line")
    turn(roost, pane, "go")
    assert roost.option(pane, "@roost-reply-turn") == ""
    proc = raw(roost, "read", pane)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"kept in tmux\nsecond line", b"")
    doc = roost.json("read", "--json", pane)
    assert (doc["source"], doc["text"], doc["turn"], doc["sent_by"]) == (
        "reply",
        "kept in tmux\nsecond line",
        None,
        None,
    )
    refused = roost.run("read", "--turn", "1", pane)
    assert refused.returncode == 1
    assert "not recorded" in refused.stderr


# --render, with a fake preen first on PATH


def fake_preen(tmp_path: Path, body: str) -> dict[str, str]:
    bindir = tmp_path / "preen-bin"
    bindir.mkdir(exist_ok=True)
    script = bindir / "preen"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return {"PATH": f"{bindir}:{BIN}:/usr/bin:/bin"}


@pytest.fixture
def answered(roost: Roost) -> str:
    pane = agent(roost, "api", "--reply", "# Title\nuse `x`")
    turn(roost, pane, "go")
    return pane


def test_render_pipes_the_reply_through_preen(roost: Roost, answered: str, tmp_path: Path) -> None:
    env = fake_preen(tmp_path, f'echo "$@" >{tmp_path}/args; printf "\\033[1mRENDERED\\033[0m\\n"; cat')
    for flag in ("--render", "-r"):
        proc = raw(roost, "read", flag, answered, env=env)
        assert proc.returncode == 0
        assert proc.stdout == b"\x1b[1mRENDERED\x1b[0m\n# Title\nuse `x`\n"
        assert proc.stderr == b""
    assert (tmp_path / "args").read_text() == "-\n"


def test_render_without_preen_prints_the_raw_reply(roost: Roost, answered: str) -> None:
    path = f"{BIN}:/usr/bin:/bin"
    if shutil.which("preen", path=path):
        pytest.skip("a real preen is installed")
    proc = raw(roost, "read", "-r", answered, env={"PATH": path})
    assert (proc.returncode, proc.stdout) == (0, b"# Title\nuse `x`\n")
    assert b"preen is not installed" in proc.stderr


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("echo 'glow: not found' >&2; exit 3", b"preen failed with exit 3: glow: not found"),
        (
            "cat >/dev/null; printf '\\033[0m\\n   \\n\\033]0;title\\007'",
            b"rendered the reply as nothing visible",
        ),
    ],
    ids=["failing", "empty"],
)
def test_render_that_fails_prints_the_raw_reply(
    roost: Roost, answered: str, tmp_path: Path, body: str, reason: bytes
) -> None:
    proc = raw(roost, "read", "--render", answered, env=fake_preen(tmp_path, body))
    assert (proc.returncode, proc.stdout) == (0, b"# Title\nuse `x`\n")
    assert reason in proc.stderr
    assert proc.stderr.startswith(b"roost read: --render: ")


def test_render_that_hangs_is_abandoned(roost: Roost, answered: str, tmp_path: Path) -> None:
    started = time.monotonic()
    proc = raw(roost, "read", "--render", answered, env=fake_preen(tmp_path, "sleep 60"))
    assert time.monotonic() - started < 30
    assert (proc.returncode, proc.stdout) == (0, b"# Title\nuse `x`\n")
    assert b"did not finish within 10 s" in proc.stderr


def test_screen_fallback_is_never_rendered(roost: Roost, tmp_path: Path) -> None:
    pane = roost.start("sh")
    roost.tmux("send-keys", "-t", pane, "clear; echo '2*3*4 <ttyUSB0> _low_'", "Enter")
    roost.wait_screen(pane, "2*3*4 <ttyUSB0> _low_\n")
    marker = tmp_path / "preen-ran"
    proc = raw(roost, "read", "--render", pane, env=fake_preen(tmp_path, f"touch {marker}; cat"))
    assert proc.returncode == 0
    assert b"2*3*4 <ttyUSB0> _low_\n" in proc.stdout
    assert not marker.exists()
    err = proc.stderr.decode()
    assert err.startswith(FALLBACK.format(pane))
    assert "--render: the screen is not rendered" in err


def test_escape_text_is_lossy_only_on_a_tmux_that_writes_it(roost: Roost, tmp_path: Path) -> None:
    roost.env["ROOST_RECORD_DIR"] = ""
    pane = roost.start("sh")
    roost.tmux("set-option", "-p", "-t", pane, "@roost-reply", "bell \\007 and \\377")
    real = shutil.which("tmux")
    wrapper = tmp_path / "tmux34" / "tmux"
    wrapper.parent.mkdir()
    wrapper.write_text(
        f'#!/bin/sh\ncase "$*" in *"#{{version}}"*) echo 3.4; exit 0;; esac\nexec {real} "$@"\n'
    )
    wrapper.chmod(0o755)
    on_34 = {"PATH": f"{wrapper.parent}:{roost.env['PATH']}"}
    assert raw(roost, "read", pane, env=on_34).stdout == b"bell \\007 and \\377"
    doc = roost.json("read", "--json", pane, env=on_34)
    assert (doc["text"], doc["lossy"], doc["source"]) == ("bell \\007 and \\377", True, "reply")
    assert roost.json("read", "--json", pane)["lossy"] is False  # this tmux keeps the bytes


def test_tmux_escape_text_detector() -> None:
    from roost.faces.cli.roost.read import has_tmux_escapes

    for rewritten in ("a\\001b", "line\\r", "\\377", "nul \\0"):
        assert has_tmux_escapes(rewritten)
    for plain in ("C:\\\\path", "no escapes", "\\x41"):
        assert not has_tmux_escapes(plain)


# A reply given outside a numbered turn: a program that badges itself and never says working


def unnumbered_reply(roost: Roost, text: str) -> Shell:
    """A shell pane whose program runs ``roost reply TEXT`` then ``roost state done``, unnumbered."""
    shell = Shell.open(roost)
    assert shell.run("reply", text).returncode == 0
    assert shell.run("state", "done").returncode == 0
    assert roost.option(shell.pane, "@roost-turn") == ""  # no turn was ever numbered
    return shell


def test_a_reply_outside_a_numbered_turn_is_kept_and_read(roost: Roost) -> None:
    shell = unnumbered_reply(roost, "the tests pass; two lint warnings")
    proc = raw(roost, "read", shell.pane)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"the tests pass; two lint warnings", b"")
    doc = roost.json("read", "--json", shell.pane)
    assert set(doc) == JSON_FIELDS
    assert (doc["source"], doc["turn"], doc["text"]) == ("reply", None, "the tests pass; two lint warnings")
    assert (doc["state"], doc["stale"], doc["sent_by"], doc["lossy"]) == ("done", False, None, False)
    again = unnumbered_reply(roost, "second answer")  # a second program, and a newer reply in the first
    assert shell.run("reply", "a newer answer").returncode == 0
    assert roost.run("read", shell.pane).stdout == "a newer answer"
    assert roost.run("read", again.pane).stdout == "second answer"


def test_an_unnumbered_reply_is_never_a_numbered_turns(roost: Roost) -> None:
    shell = unnumbered_reply(roost, "before any turn")
    for bad in ("0", "1"):
        refused = roost.run("read", "--turn", bad, shell.pane)
        assert (refused.returncode, refused.stdout) == (1, ""), bad
    shell.run("state", "working")  # turn 1 begins: the reply is an earlier one's
    assert roost.option(shell.pane, "@roost-turn") == "1"
    proc = roost.run("read", shell.pane)
    assert proc.stdout == "before any turn"
    assert proc.stderr == f"roost read: '{shell.pane}' is working — this reply is from an earlier turn.\n"
    doc = roost.json("read", "--json", shell.pane)
    assert (doc["source"], doc["turn"], doc["stale"]) == ("reply", None, True)
    assert "turn 1" in roost.run("read", "--turn", "1", shell.pane).stderr
    shell.run("state", "done")  # turn 1 said nothing: the old reply is not its answer
    proc = roost.run("read", shell.pane)
    assert proc.stderr == FALLBACK.format(shell.pane)
    assert roost.json("read", "--json", shell.pane)["source"] == "screen"
    shell.run("state", "working")
    shell.run("reply", "turn two's answer")
    shell.run("state", "done")
    doc = roost.json("read", "--json", shell.pane)
    assert (doc["source"], doc["turn"], doc["text"]) == ("reply", 2, "turn two's answer")
    assert roost.run("read", "--turn", "1", shell.pane).returncode == 1


def test_a_numbered_turns_reply_replaces_an_unnumbered_one(roost: Roost) -> None:
    shell = unnumbered_reply(roost, "before any turn")
    shell.run("state", "working")
    shell.run("reply", "turn one's answer")
    shell.run("state", "done")
    doc = roost.json("read", "--json", shell.pane)
    assert (doc["turn"], doc["text"]) == (1, "turn one's answer")
    assert roost.run("read", "--turn", "1", shell.pane).stdout == "turn one's answer"


def test_an_unnumbered_reply_outlives_its_pane(roost: Roost) -> None:
    shell = unnumbered_reply(roost, "said before closing")
    roost.window("keep", "sh")  # the server stays up once the pane is gone
    roost.tmux("kill-pane", "-t", shell.pane)
    proc = roost.run("read", shell.pane)
    assert (proc.returncode, proc.stdout) == (0, "said before closing")
    doc = roost.json("read", "--json", shell.pane)
    assert (doc["source"], doc["turn"], doc["text"], doc["sent_by"]) == (
        "reply",
        None,
        "said before closing",
        None,
    )
