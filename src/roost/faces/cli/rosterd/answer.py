"""``rosterd allow KEY [--always]`` and ``rosterd deny KEY [--reason TEXT]``: answer a pending
permission, of a headless session or of a pane whose harness has a gate.

The verb reads the session first and answers the very request it saw, pinning its id, the
occupant and the status epoch: if the request was answered meanwhile (in the terminal, from the
phone), or another one opened, the daemon refuses and nothing is answered twice or wrongly.
A refusal exits 1 with the daemon's reason, which names its code's cause (see
:mod:`roost.actions.permission`); a pane with no gate says to answer in its terminal.
"""

from __future__ import annotations

import json

from roost.faces.cli.daemonclient import Client, path_of
from roost.faces.cli.rosterd.headless import show
from roost.faces.cli.rosterd.options import parse

USAGE = (
    ("allow KEY [--always]", "answer a session's pending permission: allow (always)"),
    ("deny KEY [--reason TEXT]", "answer a session's pending permission: reject"),
)


def run(verb: str, args: list[str]) -> int:
    if verb == "allow":
        usage = "usage: rosterd allow KEY [--always] [--json]"
        options = parse(args, usage, flags=("--json", "--always"), positional=1)
        body: dict = {"option": "allow_always" if "--always" in options.flags else "allow"}
    else:
        usage = "usage: rosterd deny KEY [--reason TEXT] [--json]"
        options = parse(args, usage, flags=("--json",), valued=("--reason",), positional=1)
        body = {"option": "reject"}
        if "--reason" in options.values:
            body["reason"] = options.values["--reason"]
    key = options.positional[0]
    with Client() as client:
        record = json.loads(client.get(path_of("sessions", key)))
        pending = record.get("pending") or {}
        body.update(
            {
                name: value
                for name, value in (
                    ("request_id", pending.get("id")),
                    ("status_epoch", record.get("status_epoch")),
                    ("occupant_id", record.get("occupant_id")),
                )
                if value is not None and (name != "occupant_id" or value > 0)
            }
        )
        sent = client.post(path_of("sessions", record.get("session_key") or key, "permission"), body)
    show(sent, "--json" in options.flags, "allowed" if verb == "allow" else "denied")
    return 0
