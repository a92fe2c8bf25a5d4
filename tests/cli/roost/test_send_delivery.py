"""``roost send`` delivers text whole, once, and submits it — even to panes that misbehave.

The fake agent logs every byte it reads, so each test compares what arrived with what was
sent: booting panes that drop input, swallowed Enters, long messages, paste-breaking escape
sequences, concurrent senders and a thousand sends in a row.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli.roost.test_send import PASTE_END, PASTE_START, agent, prime, prompts, wait_state
from tests.conftest import BIN, Roost


def test_swallowed_enter_is_pressed_again(roost: Roost, tmp_path: Path) -> None:
    log = tmp_path / "log"
    pane = agent(roost, log, "--work", "0", "--swallow-enters", "1")
    proc = roost.run("send", pane, "second enter")
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stderr
    assert log.read_bytes() == PASTE_START + b"second enter" + PASTE_END + b"\r\r"
    wait_state(roost, pane, "done")
    assert roost.screen(pane).count("fake reply") == 1


def test_booting_pane_gets_the_text_exactly_once(roost: Roost, tmp_path: Path) -> None:
    log = tmp_path / "log"
    pane = agent(roost, log, "--work", "0", "--boot", "2", wait=False)
    proc = roost.run("send", pane, "sent while booting")
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stderr
    wait_state(roost, pane, "done")
    assert log.read_bytes() == PASTE_START + b"sent while booting" + PASTE_END + b"\r"
    assert roost.screen(pane).count("[Pasted text") == 1


def test_paste_read_and_lost_is_never_pasted_again(roost: Roost, tmp_path: Path) -> None:
    """A pane that reads the paste and shows nothing may have kept it: it is not pasted a
    second time, it gets one Enter, and the exit is 4, as nothing proves the text arrived."""
    log = tmp_path / "log"
    pane = agent(roost, log, "--work", "0", "--drop-reads", "1")
    proc = roost.run("send", pane, "only once")
    assert (proc.returncode, proc.stdout) == (4, ""), proc.stderr
    assert "showed nothing that proves the text arrived — do not resend" in proc.stderr
    assert log.read_bytes() == b"\r"


@pytest.mark.parametrize("size", [20 * 1024, 200 * 1024])
def test_long_messages_arrive_whole(roost: Roost, tmp_path: Path, size: int) -> None:
    log = tmp_path / "log"
    pane = agent(roost, log, "--work", "0")
    prime(roost, pane)
    line = "0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ .,;:!?-_=+()[]{}\n"
    text = (f"BEGIN {size}\n" + line * (size // len(line)))[: size - 4] + " END"
    # one argument may not exceed 128 KB (the kernel's limit), so the text goes as words
    proc = roost.run("send", pane, *text.split(" "), timeout=120)
    assert (proc.returncode, proc.stdout) == (0, f"{pane} 2\n"), proc.stderr
    # tmux pastes a newline as a carriage return, as a terminal does
    assert prompts(log)[-1] == text.replace("\n", "\r").encode()
    assert roost.tmux("list-buffers") == ""


def test_message_from_stdin_arrives_whole(roost: Roost, tmp_path: Path) -> None:
    """``-`` reads the message from stdin: 300 KB as one piece, bytes unchanged."""
    log = tmp_path / "log"
    pane = agent(roost, log, "--work", "0")
    prime(roost, pane)
    text = "".join(f"line {i:06d} of a long briefing\n" for i in range(10_000)) + "END"
    proc = roost.run("send", pane, "-", input=text, timeout=120)
    assert (proc.returncode, proc.stdout) == (0, f"{pane} 2\n"), proc.stderr
    assert prompts(log)[-1] == text.replace("\n", "\r").encode()


def test_paste_end_marker_cannot_break_out(roost: Roost, tmp_path: Path) -> None:
    log = tmp_path / "log"
    pane = agent(roost, log, "--work", "0", "--echo-reply")
    prime(roost, pane)
    proc = roost.run("send", pane, "before\x1b[201~typed\x1b[20\x1b[200~1~ after")
    assert (proc.returncode, proc.stdout) == (0, f"{pane} 2\n"), proc.stderr
    data = log.read_bytes()
    assert data.endswith(PASTE_START + b"beforetyped after" + PASTE_END + b"\r")
    assert data.count(PASTE_END) == 2  # the priming prompt's and this one's: none from the text
    wait_state(roost, pane, "done")
    roost.wait_screen(pane, "reply to: beforetyped after")


def test_concurrent_senders_arrive_whole_and_unmixed(roost: Roost, tmp_path: Path) -> None:
    log = tmp_path / "log"
    pane = agent(roost, log, "--work", "0")
    prime(roost, pane)
    texts = [f"sender {n}: " + chr(ord("a") + n) * 5000 for n in range(4)]
    procs = [
        subprocess.Popen([str(BIN / "roost"), "send", pane, text], env=roost.env, stdout=subprocess.PIPE)
        for text in texts
    ]
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    roost.wait_for(lambda: log.read_bytes().count(b"\r") == 5, 30, "four submitted prompts")
    assert sorted(prompts(log)[1:]) == sorted(t.encode() for t in texts)
    assert log.read_bytes().count(b"\r") == 5
    assert roost.tmux("list-buffers") == ""


def test_buffer_list_is_empty_after_a_pane_dies_mid_flight(roost: Roost, tmp_path: Path) -> None:
    """Killed while the paste is still unread: nothing is left in tmux's buffer list."""
    log = tmp_path / "log"
    agent(roost, log, name="keeper")
    pane = agent(roost, tmp_path / "log2", "--deaf", "30")
    proc = subprocess.Popen(
        [str(BIN / "roost"), "send", pane, "x" * 100_000],
        env=roost.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    time.sleep(1)
    roost.tmux("kill-pane", "-t", pane)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out) == (2, b""), err
    assert f"pane {pane} went away".encode() in err
    assert roost.tmux("list-buffers") == ""


@pytest.mark.timeout(400)
def test_a_thousand_sends_in_a_row(roost: Roost, tmp_path: Path) -> None:
    """Every message reaches the agent exactly once, in order.

    The agent fires no hooks, so the time measured is roost's own (a hooked agent spends a
    Python start-up per hook, and each send would wait on two of them).
    """
    log = tmp_path / "log"
    pane = agent(roost, log, "--work", "0", "--no-hooks")
    count = int(os.environ.get("ROOST_SEND_COUNT", "1000"))
    started = time.monotonic()
    for n in range(count):
        proc = roost.run("send", "--json", pane, f"message {n:04d}")
        assert proc.returncode == 0, (n, proc.stderr)
        assert json.loads(proc.stdout)["pane"] == pane
    elapsed = time.monotonic() - started
    print(f"{count} sends in {elapsed:.1f}s ({elapsed / count * 1000:.0f} ms each)")
    assert prompts(log) == [f"message {n:04d}".encode() for n in range(count)]
    assert log.read_bytes().count(b"\r") == count


def test_back_to_back_sends_to_a_hooked_agent(roost: Roost, tmp_path: Path) -> None:
    """No pause between sends: each named turn is new, and every prompt arrives once, in order."""
    log = tmp_path / "log"
    pane = agent(roost, log, "--work", "0")
    prime(roost, pane)
    named = []
    for n in range(30):
        proc = roost.run("send", pane, f"prompt {n}")
        assert proc.returncode == 0, (n, proc.stderr)
        if proc.stdout:
            named.append(int(proc.stdout.split()[1]))
    assert named == sorted(set(named))
    assert all(turn >= 2 for turn in named)
    assert prompts(log) == [b"first prompt"] + [f"prompt {n}".encode() for n in range(30)]
