"""``rosterd list [--json]``: the roster now, one row per session.

Reads ``GET /snapshot`` only, so it answers even while the daemon's other parts are busy.
``--json`` prints that body as sent; the table is for people.
"""

from __future__ import annotations

import json

from roost.cli.daemonclient import Client
from roost.cli.rosterd import printing
from roost.cli.rosterd.options import parse

USAGE = (("list [--json]", "one row per session: name, harness, activity, age, lane, node, pid"),)


def run(verb: str, args: list[str]) -> int:
    options = parse(args, "usage: rosterd list [--json]", flags=("--json",))
    with Client() as client:
        body = client.get("/snapshot")
    if "--json" in options.flags:
        printing.raw(body)
    else:
        for text in printing.roster(json.loads(body)):
            printing.line(text)
    return 0
