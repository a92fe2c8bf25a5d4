"""``rosterd close KEY [--force] [--timeout S] [--json]``: close a session, whatever its lane.

One request to the daemon (``POST /sessions/{key}/close``): a headless session ends as ``stop``
ends it; a session in a pane of roost's tmux server is asked to leave with its harness's exit
command, given ``--timeout`` seconds (10 unless told), and its pane closed, as ``roost close``
does it. ``--force`` closes a pane whose agent is working, blocked or unknown without typing a
word. ``--json`` prints the daemon's answer as sent (``record``, ``pane``, ``state``,
``harness``, ``exit_command``, ``forced``). Every refusal exits 1 and closes nothing.
"""

from __future__ import annotations

import json

from roost.base.errors import UsageError
from roost.faces.cli.daemonclient import Client, path_of
from roost.faces.cli.rosterd import printing
from roost.faces.cli.rosterd.options import parse

USAGE = (
    (
        "close KEY [--force] [--timeout S]",
        "close a session: end a headless one; ask a pane's agent to leave, then close its pane",
    ),
)
SYNTAX = "usage: rosterd close KEY [--force] [--timeout SECONDS] [--json]"
LONGEST = 300
"""Seconds the daemon gives an agent to leave at most."""
SLACK = 10.0
"""Seconds the client waits past ``--timeout`` for the daemon's answer."""


def run(verb: str, args: list[str]) -> int:
    options = parse(args, SYNTAX, flags=("--force", "--json"), valued=("--timeout",), positional=1)
    body: dict = {"force": "--force" in options.flags}
    raw = options.values.get("--timeout")
    if raw is not None:
        if not (raw.isascii() and raw.isdigit()) or int(raw) > LONGEST:
            raise UsageError(f"--timeout takes whole seconds from 0 to {LONGEST}, got {raw!r}")
        body["timeout_s"] = int(raw)
    with Client(timeout=body.get("timeout_s", 10) + SLACK) as client:
        sent = client.post(path_of("sessions", options.positional[0], "close"), body)
    if "--json" in options.flags:
        printing.raw(sent)
        return 0
    answer = json.loads(sent)
    record = answer.get("record") or {}
    key = record.get("session_key") or answer.get("pane")
    how = f"typed {answer['exit_command']!r}" if answer.get("exit_command") else None
    how = how or ("forced" if answer.get("forced") else None)
    where = f"pane {answer['pane']}" if answer.get("pane") else "headless"
    printing.line(f"{key}: closed ({where}{', ' + how if how else ''})")
    return 0
