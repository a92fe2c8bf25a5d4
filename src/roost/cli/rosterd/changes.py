"""``rosterd changes [--json] [--since SEQ]``: one line per change, as they happen.

Follows ``GET /changes``. Without ``--since`` the first frame is a ``snapshot`` (where the
roster stands); with it, every change after SEQ is replayed first, or a snapshot when SEQ is
too old or from before the daemon restarted. A line for people is ``seq event key name
activity``; ``--json`` prints each frame's JSON as received.
"""

from __future__ import annotations

from urllib.parse import quote

from roost.cli.daemonclient import Client
from roost.cli.rosterd import printing
from roost.cli.rosterd.options import parse
from roost.errors import UsageError

TYPE_CHECKING = False  # as in roost.paths: importing typing costs every verb ~2 ms
if TYPE_CHECKING:
    from typing import Any

USAGE = (("changes [--json] [--since SEQ]", "one line per change (attention is the one to notify on)"),)
_USAGE = "usage: rosterd changes [--json] [--since SEQ]"


def describe(change: dict[str, Any]) -> str:
    """``seq event key name activity``; a snapshot says how many sessions it holds."""
    seq, event = change.get("seq"), change.get("event")
    record = change.get("record")
    if record is None:
        count = len((change.get("snapshot") or {}).get("records", []))
        return f"{seq} {event} {count} sessions"
    return f"{seq} {event} {record.get('session_key')} {printing.label(record)} {printing.activity(record)}"


def run(verb: str, args: list[str]) -> int:
    options = parse(args, _USAGE, flags=("--json",), valued=("--since",))
    since = options.values.get("--since")
    if since == "":
        raise UsageError(_USAGE)
    path = "/changes" if since is None else f"/changes?since={quote(since)}"
    as_json = "--json" in options.flags
    with Client() as client:
        for frame in client.stream(path):
            if as_json:
                printing.raw(frame.data)
            else:
                printing.line(describe(frame.json()))
    return 0
