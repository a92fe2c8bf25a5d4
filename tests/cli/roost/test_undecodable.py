"""Arguments that are not UTF-8: every verb answers them, none with a traceback.

A command line is bytes, and Python hands a byte that is not UTF-8 to a verb as a lone
surrogate (``surrogateescape``). Each verb decides what such an argument is: text it keeps is
kept (a reply as the bytes it was, a reason with U+FFFD in its place), and a value that must be
exact (a path, a name) is refused with one line.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from roost.faces.cli.roost import VERBS
from roost.pane.state.events import Log
from tests.cli.roost.test_windows import inside
from tests.conftest import BIN, Roost

BAD = "bad\udcffbyte"
"""``bad\\xffbyte`` on the command line, as Python's ``sys.argv`` holds it."""


def run(roost: Roost, pane: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    """``roost ARGS`` from inside ``pane``, stdin a closed pipe, output as bytes."""
    return subprocess.run(
        [str(BIN / "roost"), *args],
        input=b"",
        capture_output=True,
        env={**roost.env, **inside(roost, pane)},
        timeout=60,
    )


@pytest.fixture
def pane(roost: Roost) -> str:
    return roost.start("sh")


def test_reply_keeps_the_bytes_and_read_says_lossy(roost: Roost, pane: str) -> None:
    assert run(roost, pane, "state", "working").returncode == 0
    proc = run(roost, pane, "reply", BAD)
    assert (proc.returncode, proc.stderr) == (0, b"")
    assert run(roost, pane, "state", "done").returncode == 0
    assert run(roost, pane, "read", pane).stdout == b"bad\xffbyte"
    doc = roost.json("read", "--json", pane)
    assert (doc["text"], doc["lossy"], doc["turn"]) == ("bad\ufffdbyte", True, 1)


def test_state_error_badges_with_the_reason_it_could_read(roost: Roost, pane: str) -> None:
    proc = run(roost, pane, "state", "error", "bad\udcffreason")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert roost.option(pane, "@roost-state") == "error"
    assert roost.option(pane, "@roost-reason") == "bad\ufffdreason"
    logged = Log(roost.root / "state" / "roost" / "panes" / "events").read()
    assert (logged[-1]["to"], logged[-1]["reason"]) == ("error", "bad\ufffdreason")


def test_state_json_of_a_word_that_is_not_utf8_is_still_json(roost: Roost, pane: str) -> None:
    """An unknown word is recorded as idle, as always; the document says what was asked, readably."""
    proc = run(roost, pane, "state", "\udcff", "--json")
    assert (proc.returncode, proc.stderr) == (0, b"")
    doc = json.loads(proc.stdout.decode("utf-8"))
    assert (doc["requested"], doc["state"], doc["recorded"]) == ("\ufffd", "idle", True)


@pytest.mark.parametrize("flag", ["--cwd", "--transcript"])
def test_identify_refuses_a_path_that_is_not_utf8(roost: Roost, pane: str, flag: str) -> None:
    values = {"--session": "s-1", "--cwd": "/srv/api", "--harness": "mytool", flag: "/tmp/\udcff"}
    proc = run(roost, pane, "identify", *(word for pair in values.items() for word in pair))
    assert (proc.returncode, proc.stdout) == (2, b"")
    assert proc.stderr == f"roost identify: {flag} must be valid UTF-8\n".encode()
    assert roost.option(pane, "@roost-session-id") == ""


SHAPES = (["\udcff"], ["PANE", "\udcff"], ["\udcff", "PANE"], ["-n", "\udcff", "true"], ["--json", "\udcff"])
"""Where a verb may meet such an argument: alone, as a target, after a target, as a flag's value."""


@pytest.mark.parametrize("verb", sorted(set(VERBS) - {"attach", "ssh"}))
def test_no_verb_tracebacks_on_an_argument_that_is_not_utf8(roost: Roost, pane: str, verb: str) -> None:
    """``attach`` needs a terminal and ``ssh`` another machine: each refuses first, below."""
    for shape in SHAPES:
        args = [pane if word == "PANE" else word for word in shape]
        proc = run(roost, pane, verb, *args)
        assert b"Traceback" not in proc.stderr, (verb, args, proc.stderr.decode(errors="replace"))
        proc.stdout.decode("utf-8")  # what a verb prints is UTF-8, whatever it was given


@pytest.mark.parametrize("verb", ["attach", "ssh"])
def test_verbs_that_leave_for_elsewhere_refuse_first(roost: Roost, pane: str, verb: str) -> None:
    proc = run(roost, pane, verb, "-o", "\udcff")
    assert b"Traceback" not in proc.stderr
    assert proc.returncode != 0
