"""``rosterd changes [--json] [--since SEQ] [--local | --swarm | --node N]``: one line per change,
as they happen, across the swarm (the specification's "one line per change across the swarm").

Follows the swarm's ``GET /swarm/changes`` (``seq event node …``, ``node`` and ``node_left``
among the events, ``--since SEQ`` or ``EPOCH:SEQ`` as its frames' ids give it); a node in no
swarm has only its own changes there. ``--node N`` narrows it to N's changes; ``--local``
follows this node's own ``GET /changes`` instead (its own numbering, ``seq event key name
state``). ``--swarm`` is accepted and changes nothing: it was the way to ask for the swarm
before the swarm was the default. Without ``--since`` the first frame is a ``snapshot``
(where things stand); with it, every change after SEQ is replayed first, or a snapshot when
SEQ is too old or from before the daemon restarted. ``--json`` prints each frame's JSON as
received.
"""

from __future__ import annotations

from urllib.parse import quote

from roost.base.errors import UsageError
from roost.faces.cli.daemonclient import Client
from roost.faces.cli.rosterd import printing, swarmview
from roost.faces.cli.rosterd.options import parse

TYPE_CHECKING = False  # as in roost.base.paths: importing typing costs every verb ~2 ms
if TYPE_CHECKING:
    from typing import Any

USAGE = (
    (
        "changes [--json] [--since SEQ] [--local | --swarm | --node N]",
        "one line per change across the swarm, or --local (attention is the one to notify on)",
    ),
)
_USAGE = "usage: rosterd changes [--json] [--since SEQ] [--local | --swarm | --node N]"


def describe(change: dict[str, Any]) -> str:
    """``seq event key name state``; a snapshot says how many sessions it holds."""
    seq, event = change.get("seq"), change.get("event")
    record = change.get("record")
    if record is None:
        count = len((change.get("snapshot") or {}).get("records", []))
        return f"{seq} {event} {count} sessions"
    return f"{seq} {event} {record.get('session_key')} {printing.label(record)} {printing.state(record)}"


def run(verb: str, args: list[str]) -> int:
    flags = ("--json", "--local", *swarmview.FLAGS)
    options = parse(args, _USAGE, flags=flags, valued=("--since", *swarmview.VALUED))
    since = options.values.get("--since")
    local = "--local" in options.flags
    if since == "" or (local and ("--swarm" in options.flags or "--node" in options.values)):
        raise UsageError(_USAGE)
    path = "/changes" if local else swarmview.route(options, "/swarm/changes", "/swarm/changes", _USAGE)[0]
    if since is not None:
        path = swarmview.joined(path, f"since={quote(since)}")
    lines = describe if path.startswith("/changes") else swarmview.describe
    as_json = "--json" in options.flags
    with Client() as client:
        for frame in client.stream(path):
            if as_json:
                printing.raw(frame.data)
            else:
                printing.line(lines(frame.json()))
    return 0
