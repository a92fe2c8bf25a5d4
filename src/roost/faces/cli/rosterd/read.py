"""``rosterd read KEY [--json]``: one session in full, from ``GET /sessions/{KEY}``.

KEY is an exact session key, a pid on this node or a unique display name; the daemon resolves
it, so every client agrees on what a KEY means. Unknown or ambiguous: exit 1, and an ambiguous
name lists its candidates instead of guessing.
"""

from __future__ import annotations

import json

from roost.faces.cli.daemonclient import Client, path_of
from roost.faces.cli.rosterd import printing
from roost.faces.cli.rosterd.options import parse

USAGE = (("read KEY [--json]", "one session in full (KEY: session key, pid or unique name)"),)


def run(verb: str, args: list[str]) -> int:
    options = parse(args, "usage: rosterd read KEY [--json]", flags=("--json",), positional=1)
    with Client() as client:
        body = client.get(path_of("sessions", options.positional[0]))
    if "--json" in options.flags:
        printing.raw(body)
    else:
        for text in printing.fields(json.loads(body).items()):
            printing.line(text)
    return 0
