"""``roost help`` lists every verb, one line each; ``roost --version`` prints the version."""

from __future__ import annotations

import pytest

from roost import __version__
from roost.faces.cli.roost import VERBS


@pytest.mark.parametrize("flag", ["help", "--help", "-h"])
def test_help_lists_every_public_verb(roost, flag):
    proc = roost.run(flag)
    assert (proc.returncode, proc.stderr) == (0, "")
    usages = [
        line[2:].split("  ")[0].split() for line in proc.stdout.splitlines() if line.startswith("  roost")
    ]
    rows = [words[1] if len(words) > 1 else "" for words in usages]
    public = {v for v in VERBS if not v.startswith(("-", "_")) and v != "attach"}
    assert set(rows) == public | {""}  # "" is bare `roost`, which attaches
    assert len(rows) == len(set(rows))


def test_version(roost):
    proc = roost.run("--version")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"roost {__version__}\n", "")


def test_help_takes_no_arguments(roost):
    proc = roost.run("help", "send")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.startswith("usage: roost help")


def test_unknown_verb_points_at_help(roost):
    proc = roost.run("frobnicate")
    assert proc.returncode == 1
    assert "roost help" in proc.stderr
