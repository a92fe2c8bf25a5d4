"""Every printing ``roost`` verb ends quietly, exit 0, when its reader goes (``| head -c0``).

A reader that has seen enough is no failure of the writer; a verb's own failures keep their
exit codes through the same pipe, so a ``set -o pipefail`` script sees exactly those.
``events --follow`` ends as soon as its reader goes, not only at its next line.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.cli.pipes import fails_quietly, first_line_then_gone, into_closed_pipe, tries
from tests.conftest import BIN, Roost

ROOST = str(BIN / "roost")
PROMPT = 5.0  # seconds a follow may take to notice its reader went, on a loaded machine
PANE = "{pane}"


@pytest.fixture
def pane(roost: Roost) -> str:
    """A pane that badged itself done with a kept reply, so read prints it with no notice."""
    pane = roost.start("sleep 600")
    inside = {"TMUX": f"{roost.socket},1,0", "TMUX_PANE": pane}
    for args in (("state", "working"), ("reply", "the tests pass"), ("state", "done")):
        proc = roost.run(*args, env=inside)
        assert proc.returncode == 0, proc.stderr
    return pane


@pytest.mark.parametrize(
    "args",
    [
        ["status"],
        ["status", "--json"],
        ["events"],
        ["events", "--follow"],
        ["read", PANE],
        ["read", "--json", PANE],
        ["screen", PANE],
        ["screen", "--json", PANE],
        ["ls"],
        ["help"],
        ["--version"],
    ],
    ids=" ".join,
)
def test_a_verb_whose_reader_goes_exits_0_and_says_nothing(roost: Roost, pane: str, args: list[str]) -> None:
    argv = [ROOST, *(arg.format(pane=pane) for arg in args)]
    for env in tries(roost.env):
        assert into_closed_pipe(argv, env) == (0, b"")


def test_events_follow_ends_as_soon_as_its_reader_goes(roost: Roost, pane: str) -> None:
    code, stderr, took = first_line_then_gone([ROOST, "events", "--follow"], roost.env)
    assert (code, stderr) == (0, b"")
    print(f"events --follow ended {took * 1000:.0f} ms after its reader went")
    assert took < PROMPT  # nothing else happens on this server: no next line would have ended it


def test_a_failure_keeps_its_exit_code_through_a_closed_pipe(roost: Roost, pane: str) -> None:
    fails_quietly([ROOST, "read", "%999"], roost.env, 2, b"roost read: ")
    fails_quietly([ROOST, "events", "--since", "nonsense"], roost.env, 1, b"usage: roost events")
    fails_quietly([ROOST, "nosuchverb"], roost.env, 1, b"usage: roost: unknown command 'nosuchverb'")


def test_pipefail_sees_only_the_verbs_own_failures(roost: Roost, pane: str) -> None:
    script = (
        f"set -o pipefail; {ROOST} status | head -c0 || exit 10; {ROOST} read %999 2>/dev/null | head -c0"
    )
    proc = subprocess.run(["bash", "-c", script], env=roost.env, capture_output=True)
    assert (proc.returncode, proc.stderr) == (2, b"")
