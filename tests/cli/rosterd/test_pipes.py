"""Every printing ``rosterd`` verb ends quietly, exit 0, when its reader goes (``| head -c0``).

The daemon is real; each verb runs ``TRIES`` times into a pipe whose reader exits at once.
The streams (``watch``, ``changes``) also end as soon as their reader goes, while they wait
for a change that never comes. The verbs' own exit codes (1 a user error, 2 the daemon is
unreachable) are unchanged through the same pipe.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.pipes import fails_quietly, first_line_then_gone, into_closed_pipe, tries
from tests.cli.rosterd.helpers import badged, session_of
from tests.conftest import BIN, Roost
from tests.daemon.fixture import Daemon

ROSTERD = str(BIN / "rosterd")
PROMPT = 5.0  # seconds a stream may take to notice its reader went, on a loaded machine
SCREEN = Path(__file__).parents[2] / "fixtures" / "screens" / "claude" / "done-after-reply-80x24.txt"
KEY = "{key}"


@pytest.fixture
def key(roost: Roost, running: Daemon) -> str:
    """The key of a session the daemon holds, for read and explain."""
    return session_of(running, badged(roost, "working", session="pipes"))["session_key"]


PRINTING = [
    ["list"],
    ["list", "--json"],
    ["watch"],
    ["watch", "--json"],
    ["changes"],
    ["changes", "--json"],
    ["status"],
    ["status", "--json"],
    ["read", KEY],
    ["explain", KEY],
    ["detect", "explain", str(SCREEN)],
    ["detect", "check"],
    ["help"],
    ["version"],
]
"""Every verb that prints, with the daemon up: one daemon walks the whole table."""


def test_a_verb_whose_reader_goes_exits_0_and_says_nothing(running: Daemon, key: str) -> None:
    for args in PRINTING:
        argv = [ROSTERD, *(arg.format(key=key) for arg in args)]
        for env in tries(running.env):
            assert into_closed_pipe(argv, env) == (0, b""), args


@pytest.mark.parametrize(
    "args", [["watch"], ["watch", "--json"], ["changes"], ["changes", "--json"]], ids=" ".join
)
def test_a_stream_ends_as_soon_as_its_reader_goes(running: Daemon, key: str, args: list[str]) -> None:
    code, stderr, took = first_line_then_gone([ROSTERD, *args], running.env)
    assert (code, stderr) == (0, b"")
    print(f"rosterd {' '.join(args)} ended {took * 1000:.0f} ms after its reader went")
    assert took < PROMPT


def test_a_failure_keeps_its_exit_code_through_a_closed_pipe(daemon: Daemon) -> None:
    fails_quietly([ROSTERD, "list"], daemon.env, 2, b"rosterd list: the daemon is not reachable")
    fails_quietly([ROSTERD, "watch"], daemon.env, 2, b"rosterd watch: the daemon is not reachable")
    daemon.start()
    fails_quietly([ROSTERD, "read", "no-such-session"], daemon.env, 1, b"rosterd read: ")
    fails_quietly([ROSTERD, "changes", "--since="], daemon.env, 1, b"usage: rosterd changes")
