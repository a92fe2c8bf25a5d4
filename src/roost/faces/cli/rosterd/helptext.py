"""``rosterd help``: one row per verb, gathered from each verb module's ``USAGE``, fitted to the
terminal (80 columns where there is none).

Each summary is wrapped at one column, the one every usage up to two fifths of the width fits
left of; a longer usage stands on lines of its own (wrapped too, its further lines indented)
with its summary below it. A usage's first line always starts at the left edge.
"""

from __future__ import annotations

import importlib
import shutil
import textwrap
from collections.abc import Iterator

from roost.base.errors import UsageError
from roost.faces.cli.rosterd import VERBS

FALLBACK = 80
"""The width when the output is no terminal and ``COLUMNS`` says none."""
NARROWEST = 40
"""Below this a terminal is too narrow to wrap for: help is laid out for this many columns."""
GAP = 2
INDENT = 4
"""How far a long usage's further lines are indented."""


def rows() -> list[tuple[str, str]]:
    """Every verb's (usage, summary) rows, in ``VERBS`` order, each usage starting ``rosterd``."""
    found = []
    for module_name in dict.fromkeys(VERBS.values()):
        found += importlib.import_module(f"roost.faces.cli.rosterd.{module_name}").USAGE
    return [(f"rosterd {usage}", what) for usage, what in found]


def lines(listed: list[tuple[str, str]], width: int) -> Iterator[str]:
    """``listed`` laid out in ``width`` columns (a word wider than that alone overflows it)."""
    fits = [len(usage) for usage, _ in listed if len(usage) + GAP <= width * 2 // 5]
    column = max(fits, default=0) + GAP
    margin = " " * column
    for usage, what in listed:
        summary = textwrap.wrap(what, width - column) or [""]
        if len(usage) + GAP <= column:
            head = usage.ljust(column)
        else:
            yield from textwrap.wrap(
                usage, width, subsequent_indent=" " * INDENT, break_long_words=False, break_on_hyphens=False
            )
            head = margin
        yield head + summary[0]
        yield from (margin + more for more in summary[1:])


def run(verb: str, args: list[str]) -> int:
    if args:
        raise UsageError(f"usage: rosterd {verb}")
    width = max(shutil.get_terminal_size((FALLBACK, 24)).columns, NARROWEST)
    for text in lines(rows(), width):
        print(text)
    return 0


USAGE = (("help", "this list"),)
