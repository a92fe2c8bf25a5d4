"""``rosterd name KEY LABEL | rosterd name KEY --clear``: a display name every client shows.

``POST /sessions/{KEY}/name``. The name is a launcher claim, so it outranks whatever a detector
guessed, and the daemon keeps it across restarts for as long as the session's process runs
(:mod:`roost.actions.names`); ``--clear`` withdraws it and lets the detected name show again.
``--json`` prints the daemon's answer (``accepted``, ``session_key``, ``seq``, ``record``) as sent.
"""

from __future__ import annotations

import json

from roost.base.errors import UsageError
from roost.faces.cli.daemonclient import Client, path_of
from roost.faces.cli.rosterd import printing
from roost.faces.cli.rosterd.options import parse

USAGE = (("name KEY LABEL | name KEY --clear [--json]", "give a session a display name, or clear it"),)
_USAGE = "usage: rosterd name KEY LABEL | rosterd name KEY --clear [--json]"


def run(verb: str, args: list[str]) -> int:
    options = parse(args, _USAGE, flags=("--json", "--clear"), positional=(1, 2))
    clear = "--clear" in options.flags
    if clear == (len(options.positional) == 2):
        raise UsageError(_USAGE)
    key = options.positional[0]
    label = None if clear else options.positional[1]
    with Client() as client:
        body = client.post(path_of("sessions", key, "name"), {"name": label})
    if "--json" in options.flags:
        printing.raw(body)
        return 0
    answer = json.loads(body)
    record = answer.get("record") or {}
    session = answer.get("session_key") or key
    if clear:
        printing.line(f"{session}: name cleared, shown as {printing.label(record)}")
    else:
        printing.line(f"{session}: named {printing.label(record)}")
    return 0
