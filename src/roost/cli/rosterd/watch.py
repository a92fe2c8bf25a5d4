"""``rosterd watch [--json]``: the roster, printed again after every change, until interrupted.

Follows ``GET /events``, whose every frame is the whole roster: nothing is diffed or kept here.
``--json`` prints each frame's data line as received; on a terminal the table redraws in
place, into a pipe each table is followed by a blank line.
"""

from __future__ import annotations

import sys

from roost.cli.daemonclient import Client
from roost.cli.rosterd import printing
from roost.cli.rosterd.options import parse

USAGE = (("watch [--json]", "the list again on every change, until interrupted"),)

CLEAR = "\x1b[H\x1b[2J"


def run(verb: str, args: list[str]) -> int:
    options = parse(args, "usage: rosterd watch [--json]", flags=("--json",))
    as_json = "--json" in options.flags
    redraw = not as_json and sys.stdout.isatty()
    with Client() as client:
        for frame in client.stream("/events"):
            if as_json:
                printing.raw(frame.data)
                continue
            lines = printing.roster(frame.json())
            if redraw:
                sys.stdout.write(CLEAR)
            printing.line("\n".join([*lines, ""] if not redraw else lines))
    return 0
