"""``roost send`` pastes a text exactly once, into any reader, and its exit code tells the truth.

A matrix of small reader programs in real tmux panes — one that echoes (``cat``), one that
does not (``stty -echo``), a raw one (``-icanon``), one that draws nothing and reads nothing for
seconds, one that takes 1 KB per 50 ms, and a full-screen TUI — each writing every byte it reads
to a file, against a one-line, a 20 KB and a 200 KB text. Each file must end up holding the
text once (every reader here reads everything) and the exit code must be 0 where the reader's
screen proves the submit, 4 where nothing can prove it, and never 1: text may have arrived.
"""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

import pytest

from tests.cli.roost.test_send import PASTE_END, PASTE_START, shell
from tests.conftest import Roost

READY = "2"  # seconds send looks for the text on screen; short, so the matrix stays quick
READER = """
import os, sys, termios, time, tty

out, mode = sys.argv[1], sys.argv[2]
chunk, pause = int(sys.argv[3]), float(sys.argv[4])
fd = sys.stdin.fileno()
if mode == "tui":
    tty.setraw(fd)
    sys.stdout.write("\\x1b[?1049h\\x1b[?2004h\\x1b[H\\x1b[2Jtui ready")
else:
    attrs = termios.tcgetattr(fd)
    attrs[3] &= ~(termios.ECHO | termios.ICANON)
    termios.tcsetattr(fd, termios.TCSANOW, attrs)
    sys.stdout.write("reader ready" if mode == "raw" else "")
sys.stdout.flush()
got = 0
with open(out, "ab", buffering=0) as log:
    while data := os.read(fd, chunk):
        log.write(data)
        got += len(data)
        if mode == "tui":
            sys.stdout.write(f"\\x1b[H\\x1b[2Jtui: {got} bytes read")
            sys.stdout.flush()
        time.sleep(pause)
"""
LINE = "0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ .,;:!?-_=+()[]{}"


def text_of(size: int) -> str:
    """A text of about ``size`` bytes in numbered lines, so a second copy is never the first."""
    if size < 100:
        return "hello from roost"
    lines = [f"{n:05d} {LINE}" for n in range(size // (len(LINE) + 7))]
    return "\n".join(["BEGIN", *lines, "END"])


def reader(tmp_path: Path, mode: str, chunk: int = 65536, pause: float = 0.0) -> str:
    script = tmp_path / "reader.py"
    script.write_text(READER)
    return shlex.join([sys.executable, str(script), str(tmp_path / "out"), mode, str(chunk), str(pause)])


def command(tmp_path: Path, kind: str) -> str:
    """The pane's program: it writes every byte it reads to ``tmp_path / "out"``."""
    out = shlex.quote(str(tmp_path / "out"))
    programs = {
        "echo": f"echo reader ready; exec cat >> {out}",
        "noecho": f"echo reader ready; stty -echo; exec cat >> {out}",
        "raw": f"exec {reader(tmp_path, 'raw')}",
        "late": f"stty -echo -icanon; sleep 3; exec {reader(tmp_path, 'silent')}",
        "slow": f"exec {reader(tmp_path, 'raw', 1024, 0.05)}",
        "tui": f"exec {reader(tmp_path, 'tui')}",
    }
    return "sh -c " + shlex.quote(programs[kind])


def received(out: Path) -> str:
    """What the reader read, as text: paste markers gone, carriage returns as line feeds
    (tmux pastes a line feed as a carriage return; a cooked terminal turns it back)."""
    data = out.read_bytes() if out.exists() else b""
    return data.replace(PASTE_START, b"").replace(PASTE_END, b"").replace(b"\r", b"\n").decode()


# kind → the exit code its screen allows: 0 where it draws what it reads, 4 where it draws nothing
READERS = {"echo": 0, "noecho": 4, "raw": 4, "late": 4, "slow": 4, "tui": 0}
SIZES = {"line": 16, "20KB": 20 * 1024, "200KB": 200 * 1024}


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("kind", list(READERS))
def test_each_reader_gets_it_once_and_the_truth(roost: Roost, tmp_path: Path, kind: str, size: str) -> None:
    pane = shell(roost, command(tmp_path, kind), name=kind)
    roost.tmux("set-option", "-g", "@roost-send-ready-timeout", READY)
    if kind != "late":
        roost.wait_screen(pane, "ready")
    text = text_of(SIZES[size])
    started = time.monotonic()
    proc = roost.run("send", pane, "-", input=text, timeout=120)
    took = time.monotonic() - started
    expected = READERS[kind]
    assert (proc.returncode, proc.stdout) == (expected, ""), proc.stderr
    if expected == 4:
        assert proc.stderr.endswith("— do not resend\n"), proc.stderr
        assert proc.stderr.count("\n") == 1, proc.stderr
    else:  # no badge: it names no turn, and says why
        assert proc.stderr.startswith(f"roost send: submitted to {pane}, with no turn to name: "), proc.stderr
        assert proc.stderr.count("\n") == 1, proc.stderr
    assert took < 12, took  # bounded by the ready timeout, not by retries
    out = tmp_path / "out"
    whole = text + "\n"  # the Enter that submitted it
    roost.wait_for(lambda: len(received(out)) >= len(whole), 60, f"{kind} to read {size}")
    time.sleep(0.3)  # anything more would have arrived by now
    assert received(out) == whole
    assert roost.tmux("list-buffers") == ""


def test_nothing_is_pasted_twice_into_a_pane_that_shows_nothing(roost: Roost, tmp_path: Path) -> None:
    """The report that started it: ``stty -echo; cat >> f`` got ``hello`` ten times and exit 1.

    With the default ready timeout of 15 s the send now ends after one paste and one Enter,
    in a few seconds, with exit 4, and ``f`` holds ``hello`` once.
    """
    pane = shell(roost, command(tmp_path, "noecho"), name="noecho")
    roost.wait_screen(pane, "ready")
    started = time.monotonic()
    proc = roost.run("send", pane, "hello")
    assert proc.returncode == 4, proc.stderr
    assert f"pasted into {pane} once and pressed Enter" in proc.stderr
    assert time.monotonic() - started < 6
    roost.wait_for(lambda: received(tmp_path / "out"), 10, "the line")
    time.sleep(2)  # the old loop pasted again every 1.5 s
    assert received(tmp_path / "out") == "hello\n"
