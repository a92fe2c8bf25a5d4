"""``rosterd help`` fits the terminal it prints to (80 columns where there is none) and still
lists every verb, each usage starting its line."""

from __future__ import annotations

import re

import pytest

from roost.faces.cli.rosterd import VERBS
from tests.cli.rosterd.sandbox import Machine, machine

__all__ = ["machine"]


@pytest.mark.parametrize("columns", ["80", "60", "132", None])
def test_help_fits_the_width_and_lists_every_verb(machine: Machine, columns: str | None) -> None:
    env = {"COLUMNS": columns} if columns else {}
    machine.env.pop("COLUMNS", None)
    proc = machine.rosterd("help", env=env)
    assert (proc.returncode, proc.stderr) == (0, "")
    lines = proc.stdout.splitlines()
    width = int(columns or 80)  # no terminal and no COLUMNS: 80
    assert max(len(line) for line in lines) <= width, proc.stdout
    listed = {m[1] for m in re.finditer(r"^rosterd (\S+)", proc.stdout, re.MULTILINE)}
    hidden = ("-", "_")  # --help, -h, and __complete, which only the shells' scripts call
    assert listed == {verb for verb in VERBS if not verb.startswith(hidden)}
    assert all(line.startswith(("rosterd ", "    ")) for line in lines), proc.stdout
