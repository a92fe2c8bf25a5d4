"""``rosterd watch [--json] [--swarm | --node N]``: the roster, printed again after every
change, until interrupted.

Follows ``GET /events`` (``GET /swarm/events`` with ``--swarm``, narrowed by ``?node=`` with
``--node N``), whose every frame is the whole roster: nothing is diffed or kept here. A node
that goes quiet stays on screen, its header line saying ``stale`` and for how long; watch goes
on, since the node may come back. ``--json`` prints each frame's data line as received; on a
terminal the table redraws in place, into a pipe each table is followed by a blank line.
"""

from __future__ import annotations

import sys

from roost.faces.cli.daemonclient import Client
from roost.faces.cli.rosterd import printing, swarmview
from roost.faces.cli.rosterd.options import parse

USAGE = (("watch [--json] [--swarm | --node N]", "the list again on every change, until interrupted"),)
_USAGE = "usage: rosterd watch [--json] [--swarm | --node N]"

CLEAR = "\x1b[H\x1b[2J"


def run(verb: str, args: list[str]) -> int:
    options = parse(args, _USAGE, flags=("--json", *swarmview.FLAGS), valued=swarmview.VALUED)
    path, _ = swarmview.route(options, "/events", "/swarm/events", _USAGE)
    as_json = "--json" in options.flags
    redraw = not as_json and sys.stdout.isatty()
    with Client() as client:
        for frame in client.stream(path):
            if as_json:
                printing.raw(frame.data)
                continue
            if path == "/events":
                lines = [(text, False) for text in printing.roster(frame.json())]
            else:
                lines = swarmview.table(frame.json())
            if redraw:
                sys.stdout.write(CLEAR)
            for text, faint in [*lines, ("", False)] if not redraw else lines:
                printing.line(text, faint)
    return 0
