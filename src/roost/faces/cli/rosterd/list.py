"""``rosterd list [--json] [--swarm | --node N]``: the roster now, one row per session.

Reads ``GET /snapshot`` only, so it answers even while the daemon's other parts are busy.
``--swarm`` reads the union roster (``GET /swarm/snapshot``) and heads the table with a line
per node; ``--node N`` only N's part of it, and exits 3 after printing when N is unreachable
(:mod:`roost.faces.cli.rosterd.swarmview`). ``--json`` prints the body as sent; the table is for
people. As the specification draws it, the table has no header: a roster with no session is no
line at all to a pipe (``rosterd list | wc -l`` counts sessions), and on a terminal one line
that says so, since a person would otherwise read silence as a hang or a fault.
"""

from __future__ import annotations

import json
import sys

from roost.faces.cli.daemonclient import Client
from roost.faces.cli.output import complain
from roost.faces.cli.rosterd import printing, swarmview
from roost.faces.cli.rosterd.options import parse

USAGE = (
    (
        "list [--json] [--swarm | --node N]",
        "one row per session: name, harness, state, age, lane, node, pid",
    ),
)
_USAGE = "usage: rosterd list [--json] [--swarm | --node N]"
EMPTY = "no agent sessions (plain shells are not listed: roost status shows every pane)"
"""What a terminal is shown for a roster with no session."""


def run(verb: str, args: list[str]) -> int:
    options = parse(args, _USAGE, flags=("--json", *swarmview.FLAGS), valued=swarmview.VALUED)
    path, node = swarmview.route(options, "/snapshot", "/swarm/snapshot", _USAGE)
    with Client() as client:
        body = client.get(path)
    if "--json" in options.flags:
        printing.raw(body)
        if node is None:  # printed as sent: a union of 50,000 sessions is ~40 MB to parse for nothing
            return 0
        document = json.loads(body)
    else:
        document = json.loads(body)
        if path == "/snapshot":
            lines = [(text, False) for text in printing.roster(document)]
        else:
            lines = swarmview.table(document)
        if not lines and sys.stdout.isatty():
            lines = [(EMPTY, False)]
        for text, faint in lines:
            printing.line(text, faint)
    stale = swarmview.stale(document) if node is not None else None
    if stale is not None:
        complain(f"rosterd list: {stale}\n")
    return 0
