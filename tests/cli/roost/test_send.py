"""``roost send``: its exit codes, the ``%N TURN`` line, ``--json``, ``--from`` and its bounds.

Each test drives the real ``roost`` against a throwaway tmux server, with the fake agent
(tests/fakes/agent.py) or a plain shell in the target pane.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import time
from pathlib import Path

import pytest

from roost.faces.cli.roost.send import seconds
from roost.pane.tmux import paste
from tests.cli.roost.inpane import Shell
from tests.conftest import REPO, Roost

PASTE_START, PASTE_END = b"\x1b[200~", b"\x1b[201~"
USAGE = "usage: roost send [--force] [--json] [--from LABEL] TARGET MESSAGE\n"


def running(roost: Roost) -> bool:
    return bool(roost.tmux("list-sessions", "-F", "x", check=False).strip())


def agent(roost: Roost, log: Path, *flags: str, name: str = "agent", wait: bool = True) -> str:
    """A fake agent in its own window, logging every byte it reads to ``log``."""
    command = roost.fake_agent("--log", str(log), *flags)
    pane = roost.window(name, command) if running(roost) else roost.start(command, window=name)
    if wait:
        roost.wait_screen(pane, "fake agent ready")
    return pane


def shell(roost: Roost, command: str = "sh", name: str = "sh") -> str:
    return roost.window(name, command) if running(roost) else roost.start(command, window=name)


def prime(roost: Roost, pane: str) -> None:
    """A fake agent has no badge until its first prompt; that prompt is not numbered."""
    proc = roost.run("send", pane, "first prompt")
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stderr
    wait_state(roost, pane, "done")


def wait_state(roost: Roost, pane: str, state: str, timeout: float = 15) -> None:
    roost.wait_for(lambda: roost.option(pane, "@roost-state") == state, timeout, f"{pane} {state}")


def prompts(log: Path) -> list[bytes]:
    """Every bracketed paste the agent read that was followed by an Enter, in order."""
    data = log.read_bytes() if log.exists() else b""
    return re.findall(re.escape(PASTE_START) + b"(.*?)" + re.escape(PASTE_END) + b"\r", data, re.DOTALL)


def sender_file(roost: Roost, pane: str, turn: int) -> Path:
    key = roost.tmux("display-message", "-p", "#{start_time}-#{pid}").strip()
    return (
        roost.root / "state" / "roost" / "panes" / key / pane.lstrip("%") / "replies" / f"{turn:06d}.sent_by"
    )


def set_option(roost: Roost, pane: str, name: str, value: str) -> None:
    roost.tmux("set-option", "-p", "-t", pane, name, value)


def no_turn(pane: str, why: str) -> str:
    """What a send that succeeded but names no turn says on stderr."""
    return f"roost send: submitted to {pane}, with no turn to name: {why}\n"


def no_reporter(pane: str) -> str:
    return no_turn(
        pane,
        f"nothing in {pane} reported a turn: only an agent whose integration is installed numbers its "
        f"turns (rosterd integrate install claude, …); roost screen {pane} shows what it did",
    )


def assert_failed(proc, code: int, message: str) -> None:
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert proc.stdout == ""
    assert message in proc.stderr, proc.stderr


# --- exit 0: the turn line, numbering and sent_by -------------------------------------------


def test_names_each_new_turn_and_keeps_its_sender(roost: Roost, tmp_path: Path) -> None:
    log = tmp_path / "log"
    pane = agent(roost, log, "--work", "0")
    prime(roost, pane)
    for turn in (2, 3, 4):
        proc = roost.run("send", pane, f"prompt {turn}")
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == f"{pane} {turn}\n"
        assert sender_file(roost, pane, turn).read_text() == "human"
        wait_state(roost, pane, "done")
    assert not sender_file(roost, pane, 1).exists()  # the unnumbered first prompt keeps nothing
    assert prompts(log) == [b"first prompt", b"prompt 2", b"prompt 3", b"prompt 4"]


def test_json_names_the_turn(roost: Roost, tmp_path: Path) -> None:
    pane = agent(roost, tmp_path / "log", "--work", "0", name="api")
    prime(roost, pane)
    doc = roost.json("send", "--json", "api", "run the tests")
    assert doc == {
        "schema": 1,
        "command": "send",
        "target": "api",
        "pane": pane,
        "turn": 2,
        "started": True,
        "state": doc["state"],
        "sent_by": "human",
    }
    assert list(doc)[:2] == ["schema", "command"]
    assert doc["state"] in ("working", "done")


def test_plain_shell_gets_no_turn(roost: Roost) -> None:
    pane = shell(roost)
    roost.wait_for(lambda: roost.screen(pane).strip(), 10, "a prompt")
    proc = roost.run("send", pane, "echo", "one", "two")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", no_reporter(pane))
    roost.wait_screen(pane, "one two\n")
    doc = roost.json("send", "--json", pane, "echo three")
    assert doc == {
        "schema": 1,
        "command": "send",
        "target": pane,
        "pane": pane,
        "turn": None,
        "started": False,
        "state": None,
        "sent_by": None,
    }


def readme_example() -> str:
    """The README's opening example, as written: its first ``sh`` block that sends."""
    blocks = re.findall(r"```sh\n(.*?)```", (REPO / "README.md").read_text(), re.S)
    return next(block for block in blocks if "roost send" in block)


def test_the_readmes_opening_example_works_as_written_on_an_agent_with_turns(
    roost: Roost, tmp_path: Path
) -> None:
    pane = agent(roost, tmp_path / "log", "--start-hook", "--reply", "the tests pass", name="api")
    wait_state(roost, pane, "idle")
    proc = subprocess.run(
        ["bash", "-c", readme_example()], capture_output=True, text=True, env=roost.env, timeout=120
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "the tests pass", "")


def test_the_readmes_opening_example_on_a_plain_shell_says_why_at_each_step(roost: Roost) -> None:
    """A plain shell has no turns: send submits and says why it names none, and the steps that
    needed the turn say what to do instead, never ``usage: empty target``."""
    pane = shell(roost, name="api")
    roost.wait_for(lambda: roost.screen(pane).strip(), 10, "a prompt")
    proc = subprocess.run(
        ["bash", "-c", readme_example()], capture_output=True, text=True, env=roost.env, timeout=120
    )
    assert (proc.returncode, proc.stdout) == (1, "")
    said = proc.stderr.splitlines()
    assert said[0] == no_reporter(pane).rstrip("\n")
    assert said[1].startswith(
        "roost wait-done: --turn is empty: roost send prints '%N TURN' only when a turn began"
    )
    assert said[1].endswith(
        "leave out --turn to wait until it is no longer busy, or look at it with roost screen"
    )
    assert "(--turn is empty: roost send prints '%N TURN' only when a turn began" in said[2]
    assert len(said) == 3, proc.stderr


def test_enter_comes_a_beat_after_the_paste(roost: Roost, tmp_path: Path) -> None:
    """Gemini CLI takes an Enter within 30 ms of the key before it for a newline, and the
    prompt then sits unsubmitted in its input box; the screen moved, so nothing else would
    tell. The Enter must come like a person's: a beat after the text."""
    log = tmp_path / "log"
    pane = agent(roost, log, "--fast-return", "0.03", "--no-hooks", "--echo-reply")
    for prompt in ("first prompt", "second prompt"):
        proc = roost.run("send", pane, prompt)
        assert (proc.returncode, proc.stderr) == (0, no_reporter(pane))
        roost.wait_screen(pane, f"reply to: {prompt}")
    assert prompts(log) == [b"first prompt", b"second prompt"]


def test_only_a_program_that_reads_keys_waits_for_the_beat(roost: Roost, tmp_path: Path) -> None:
    """The beat before Enter is for a program that sees each key as it comes (raw mode, as
    every agent's TUI reads): a line reader (``sh``, ``cat``) gets the text and the Enter from
    the kernel as one line, so its send skips the beat. The terminal's own mode says which."""
    reader = shell(roost)
    keys = agent(roost, tmp_path / "log", "--no-hooks")
    roost.wait_for(lambda: roost.screen(reader).strip(), 10, "a prompt")
    assert paste.cooked(roost.option(reader, "pane_tty"))
    assert not paste.cooked(roost.option(keys, "pane_tty"))
    assert not paste.cooked(str(tmp_path / "no-such-tty"))  # unknown: the beat is kept
    began = time.monotonic()
    proc = roost.run("send", reader, "echo", "quick")
    took = time.monotonic() - began
    assert (proc.returncode, proc.stderr) == (0, no_reporter(reader))
    roost.wait_screen(reader, "quick\n")
    print(f"send to sh took {took * 1000:.0f} ms (the beat alone would be {paste.ENTER_GAP * 1000:.0f})")


def test_working_target_is_not_waited_for(roost: Roost, tmp_path: Path) -> None:
    log = tmp_path / "log"
    pane = agent(roost, log, "--no-hooks")
    set_option(roost, pane, "@roost-state", "working")
    set_option(roost, pane, "@roost-turn", "5")
    proc = roost.run("send", pane, "queued")
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stderr
    assert proc.stderr == no_turn(
        pane,
        f"{pane} was working, and a turn is named only for an agent whose badge read done or idle; "
        f"roost wait-done {pane} waits until it is no longer busy",
    )
    doc = roost.json("send", "--json", pane, "queued again")
    assert (doc["turn"], doc["started"], doc["state"], doc["sent_by"]) == (None, False, "working", None)
    assert prompts(log) == [b"queued", b"queued again"]


def test_unrecorded_replies_prove_a_turn_without_naming_it(roost: Roost, tmp_path: Path) -> None:
    pane = agent(roost, tmp_path / "log", "--work", "0")
    prime(roost, pane)
    proc = roost.run("send", pane, "not numbered", env={"ROOST_RECORD_DIR": ""})
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stderr
    assert proc.stderr == no_turn(
        pane, "replies are not recorded (ROOST_RECORD_DIR is empty), so turns are not numbered"
    )
    wait_state(roost, pane, "done")
    doc = roost.json("send", "--json", pane, "again", env={"ROOST_RECORD_DIR": ""})
    assert (doc["turn"], doc["started"], doc["sent_by"]) == (None, True, None)
    assert doc["state"] in ("working", "done")
    assert not sender_file(roost, pane, 2).exists()


ERRORING = (
    "echo ready; while read x; do t=$(tmux display -p -t \"$TMUX_PANE\" '#{@roost-turn}'); "
    'tmux set -p -t "$TMUX_PANE" @roost-turn $((t+1)) \\; set -p -t "$TMUX_PANE" @roost-state error; '
    "echo failed; done"
)


def test_errored_turn_is_not_named(roost: Roost) -> None:
    """A turn that began and errored at once: exit 0, started, but no number and no label."""
    pane = shell(roost, f"sh -c {shlex.quote(ERRORING)}")
    roost.wait_screen(pane, "ready")
    set_option(roost, pane, "@roost-state", "idle")
    set_option(roost, pane, "@roost-turn", "4")
    proc = roost.run("send", pane, "fail please")
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stderr
    assert proc.stderr == no_turn(pane, f"its turn ended in error at once; roost read {pane} says why")
    assert roost.option(pane, "@roost-turn") == "5"
    set_option(roost, pane, "@roost-state", "done")
    doc = roost.json("send", "--json", pane, "fail again")
    assert (doc["turn"], doc["started"], doc["state"], doc["sent_by"]) == (None, True, "error", None)
    assert not sender_file(roost, pane, 5).exists()
    assert not sender_file(roost, pane, 6).exists()


def test_window_target_reaches_its_agent_pane(roost: Roost, tmp_path: Path) -> None:
    log = tmp_path / "log"
    pane = agent(roost, log, "--work", "0", name="api")
    prime(roost, pane)
    helper = roost.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", pane, "sh").strip()
    roost.tmux("select-pane", "-t", helper)
    doc = roost.json("send", "--json", "api", "to the agent")
    assert (doc["pane"], doc["turn"]) == (pane, 2)
    assert prompts(log)[-1] == b"to the agent"


# --- --from ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "label",
    ["", "two words", "tab\there", "ctl\x01x", "del\x7fx", "-x", "--json", "x" * 65, "é" * 33, "nl\nx"],
)
def test_bad_from_label_is_refused_before_pasting(roost: Roost, tmp_path: Path, label: str) -> None:
    log = tmp_path / "log"
    pane = agent(roost, log, "--work", "0")
    proc = roost.run("send", "--from", label, pane, "never pasted")
    assert_failed(proc, 2, "roost send: --from must be one word of at most 64 bytes")
    time.sleep(0.3)
    assert log.read_bytes() == b""


def test_from_labels_are_kept(roost: Roost, tmp_path: Path) -> None:
    pane = agent(roost, tmp_path / "log", "--work", "0")
    prime(roost, pane)
    longest = "é" * 32  # 64 bytes
    for turn, given, kept in (
        (2, "%12", "pane:%12"),
        (3, "reviewer-bot", "reviewer-bot"),
        (4, longest, longest),
    ):
        doc = roost.json("send", "--json", "--from", given, pane, f"prompt {turn}")
        assert (doc["turn"], doc["sent_by"]) == (turn, kept)
        assert sender_file(roost, pane, turn).read_text() == kept
        wait_state(roost, pane, "done")


def test_default_label_inside_a_pane_is_that_pane(roost: Roost, tmp_path: Path) -> None:
    pane = agent(roost, tmp_path / "log", "--work", "0")
    prime(roost, pane)
    sender = Shell.open(roost)
    proc = sender.run("send", pane, "from a pane")
    assert (proc.returncode, proc.stdout) == (0, f"{pane} 2\n"), proc.stderr
    assert sender_file(roost, pane, 2).read_text() == f"pane:{sender.pane}"
    wait_state(roost, pane, "done")
    doc = roost.json("send", "--json", pane, "from outside")
    assert doc["sent_by"] == "human"
    assert sender_file(roost, pane, 3).read_text() == "human"


# --- exit 1: usage and delivery ------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [[], ["api"], ["--force", "api"], ["--json"], ["--from", "me"], ["--bogus", "api", "hi"], ["api", ""]],
)
def test_missing_argument_is_a_usage_error(roost: Roost, args: list[str]) -> None:
    proc = roost.run("send", *args)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", USAGE)


def test_flags_after_the_target_are_message_text(roost: Roost, tmp_path: Path) -> None:
    log = tmp_path / "log"
    pane = agent(roost, log, "--no-hooks")
    set_option(roost, pane, "@roost-state", "blocked")
    proc = roost.run("send", pane, "--force", "--json")
    assert proc.returncode == 3
    set_option(roost, pane, "@roost-state", "working")
    proc = roost.run("send", pane, "--force", "--json", "--from", "x")
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stderr
    assert prompts(log) == [b"--force --json --from x"]


def test_unread_paste_is_entered_once_and_exit_4(roost: Roost, tmp_path: Path) -> None:
    """A pane that reads nothing within the ready timeout: the text waits on its terminal, so
    it is not lost — pasted once, one Enter behind it, exit 4 (a resend would be a second copy).
    """
    log = tmp_path / "log"
    pane = agent(roost, log, "--deaf", "6")
    roost.tmux("set-option", "-g", "@roost-send-ready-timeout", "1")
    started = time.monotonic()
    proc = roost.run("send", "--json", pane, "hold this")
    assert_failed(proc, 4, f"roost send: submitted to {pane} but it has not read the Enter within 1s")
    assert time.monotonic() - started < 5
    roost.wait_for(lambda: log.exists() and log.read_bytes().endswith(b"\r"), 15, "the agent to read")
    time.sleep(0.3)
    assert log.read_bytes() == PASTE_START + b"hold this" + PASTE_END + b"\r"
    assert roost.tmux("list-buffers") == ""


def test_enter_that_never_lands_is_exit_4(roost: Roost, tmp_path: Path) -> None:
    """The text showed, then four Enters changed nothing: it was pasted, so never exit 1."""
    log = tmp_path / "log"
    pane = agent(roost, log, "--swallow-enters", "10")
    proc = roost.run("send", pane, "stuck in the box")
    assert_failed(proc, 4, f"roost send: pasted into {pane} and pressed Enter, but it never left the input")
    assert log.read_bytes() == PASTE_START + b"stuck in the box" + PASTE_END + b"\r" * 4


# --- exit 2: gone or dead ----------------------------------------------------------------------


def test_missing_target_is_exit_2(roost: Roost) -> None:
    shell(roost)
    for args in (["nosuch", "hi"], ["--json", "%99", "hi"]):
        proc = roost.run("send", *args)
        assert_failed(proc, 2, "roost send: can't find")


def test_no_server_is_exit_2(roost: Roost) -> None:
    assert_failed(roost.run("send", "api", "hi"), 2, "roost send: no roost server is running")


def test_dead_pane_is_exit_2(roost: Roost) -> None:
    shell(roost)
    roost.tmux("set-option", "-g", "remain-on-exit", "on")
    pane = roost.window("dead", "true")
    roost.wait_for(lambda: roost.option(pane, "pane_dead") == "1", 10, "the pane to die")
    assert_failed(
        roost.run("send", "--json", pane, "hi"),
        2,
        f"roost send: pane {pane} is dead: its program exited; roost screen {pane} shows how it ended, "
        f"roost close {pane} closes it\n",
    )
    assert roost.tmux("list-buffers") == ""


# --- exit 3: blocked ---------------------------------------------------------------------------


def test_blocked_target_is_refused_and_force_sends(roost: Roost, tmp_path: Path) -> None:
    log = tmp_path / "log"
    pane = agent(roost, log, "--work", "0", "--dialog-on", "deploy")
    prime(roost, pane)
    assert roost.run("send", pane, "deploy now").returncode == 0
    wait_state(roost, pane, "blocked")
    before = log.read_bytes()
    proc = roost.run("send", "--json", pane, "are you there")
    assert_failed(proc, 3, f"roost send: {pane} needs input: ")
    assert proc.stderr.endswith(" — retry later or pass --force\n")
    time.sleep(0.3)
    assert log.read_bytes() == before
    doc = roost.json("send", "--force", "--json", pane, "1")
    assert (doc["turn"], doc["started"], doc["sent_by"]) == (None, False, None)
    assert doc["state"] in ("blocked", "working", "done")
    wait_state(roost, pane, "done")
    assert prompts(log)[-1] == b"1"


def test_a_pane_over_budget_is_refused_whatever_force_says_until_the_budget_is_lifted(
    roost: Roost, tmp_path: Path
) -> None:
    """rosterd writes a session's budget on its pane (``@roost-budget``, as the record has it),
    so ``roost send`` refuses with no daemon to ask; ``roost status`` shows it and the spend."""
    log = tmp_path / "log"
    pane = agent(roost, log, "--work", "0")
    prime(roost, pane)
    reason = "this session has spent 1.70 USD of 1.00 USD"
    lift = "rosterd budget lift session k:1:2"
    held = {"state": "exceeded", "scope": "session", "reason": reason, "lift": lift}
    spend = {"turns": 2, "tokens": {"input": 10}, "cost": {"USD": 1.7}, "unpriced": 0, "last": None}
    set_option(roost, pane, "@roost-budget", json.dumps(held))
    set_option(roost, pane, "@roost-spend", json.dumps(spend))
    before = log.read_bytes()
    for flags in ([], ["--force"], ["--json"]):
        proc = roost.run("send", *flags, pane, "spend more")
        assert_failed(proc, 1, f"roost send: {pane} is over budget: {reason} — {lift} lets it through\n")
    time.sleep(0.3)
    assert log.read_bytes() == before  # nothing was typed

    entry = next(p for p in roost.json("status", "--json")["panes"] if p["id"] == pane)
    assert (entry["spend"], entry["budget"]) == (spend, held)
    row = next(line for line in roost.run("status").stdout.splitlines() if pane in line)
    assert row.endswith("  1.70 USD  over budget"), row

    set_option(roost, pane, "@roost-budget", json.dumps({**held, "state": "lifted"}))
    assert roost.run("send", pane, "spend more").returncode == 0
    wait_state(roost, pane, "done")
    assert prompts(log)[-1] == b"spend more"


def test_declined_dialog_no_longer_blocks(roost: Roost, tmp_path: Path) -> None:
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text("")
    pane = agent(
        roost, tmp_path / "log", "--work", "0", "--dialog-on", "deploy", "--transcript", str(transcript)
    )
    prime(roost, pane)
    assert roost.run("send", pane, "deploy now").returncode == 0
    wait_state(roost, pane, "blocked")
    time.sleep(1.1)
    roost.tmux("send-keys", "-t", pane, "Escape")  # declined: the agent fires no hook
    roost.wait_for(lambda: "declined" in transcript.read_text(), 10, "the decline")
    proc = roost.run("send", pane, "carry on")
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stderr


# --- exit 4: submitted, no turn ------------------------------------------------------------------


def test_no_turn_began_is_exit_4(roost: Roost, tmp_path: Path) -> None:
    log = tmp_path / "log"
    pane = agent(roost, log, "--work", "0", "--no-start")
    prime(roost, pane)
    roost.tmux("set-option", "-g", "@roost-send-turn-timeout", "01")
    started = time.monotonic()
    proc = roost.run("send", "--json", pane, "ignored prompt")
    assert_failed(proc, 4, f"roost send: submitted to {pane} but no turn began within 1s — do not resend\n")
    assert 1 <= time.monotonic() - started < 6
    assert prompts(log)[-1] == b"ignored prompt"


def test_enter_left_unread_is_exit_4(roost: Roost, tmp_path: Path) -> None:
    """The program took the paste, then stopped reading: the Enter may still submit it later."""
    log = tmp_path / "log"
    pane = agent(roost, log, "--work", "0", "--stall-after-paste", "4")
    roost.tmux("set-option", "-g", "@roost-send-ready-timeout", "1")
    proc = roost.run("send", "--json", pane, "slow reader")
    assert_failed(proc, 4, f"roost send: submitted to {pane} but it has not read the Enter within 1s")
    roost.wait_for(lambda: log.read_bytes().endswith(b"\r"), 15, "the Enter to be read")
    assert log.read_bytes() == PASTE_START + b"slow reader" + PASTE_END + b"\r"


def test_pane_that_dies_after_submit_is_exit_4(roost: Roost) -> None:
    shell(roost)
    pane = roost.window("oneshot", "sh -c 'echo ready; read x'")
    roost.wait_screen(pane, "ready")
    set_option(roost, pane, "@roost-state", "idle")
    proc = roost.run("send", pane, "last words")
    assert_failed(proc, 4, f"roost send: submitted to {pane} but the pane went away")
    assert roost.tmux("list-buffers") == ""


# --- the two bounds ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, 10), ("", 10), ("abc", 10), ("1.5", 10), ("-5", 10), ("+5", 10), (" 5", 10), ("٣", 10),
     ("08", 8), ("00", 0), ("0", 0), ("120", 120), ("121", 120), ("999", 120), ("0007", 7)],
)  # fmt: skip
def test_turn_timeout_parsing(value: str | None, expected: int) -> None:
    assert seconds(value, 10, 120) == expected


@pytest.mark.parametrize(("value", "expected"), [(None, 15), ("abc", 15), ("30", 30), ("030", 30), ("1", 1)])
def test_ready_timeout_parsing(value: str | None, expected: int) -> None:
    assert seconds(value, 15) == expected


def test_turn_timeout_zero_turns_the_wait_off(roost: Roost, tmp_path: Path) -> None:
    pane = agent(roost, tmp_path / "log", "--work", "0", "--no-start")
    prime(roost, pane)
    roost.tmux("set-option", "-g", "@roost-send-turn-timeout", "00")
    started = time.monotonic()
    doc = roost.json("send", "--json", pane, "no wait")
    assert (doc["turn"], doc["started"], doc["sent_by"]) == (None, False, None)
    assert time.monotonic() - started < 3
    wait_state(roost, pane, "done")
    plain = roost.run("send", pane, "no wait either")
    assert plain.stderr == no_turn(pane, "the turn proof is off (@roost-send-turn-timeout is 0)")
