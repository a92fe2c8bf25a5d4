"""``rosterd status [--json]``: this node as ``GET /status`` reports it.

Who the node is, its status epoch and head seq, sessions by state (from ``GET /snapshot``),
open streams, where it listens (and which listener is off, and why) and how long its last
rebuild took. ``--json`` prints the body as sent.
"""

from __future__ import annotations

import json

from roost.faces.cli.daemonclient import Client
from roost.faces.cli.rosterd import printing
from roost.faces.cli.rosterd.options import parse
from roost.faces.cli.rosterd.swarmview import COUNTED

TYPE_CHECKING = False  # as in roost.base.paths: importing typing costs every verb ~2 ms
if TYPE_CHECKING:
    from typing import Any

USAGE = (("status [--json]", "this node: identity, epoch, sessions by state, listeners"),)


def by_state(snapshot: dict[str, Any]) -> str:
    """The sessions that have not ended counted by their state in the words every face uses
    (``: 2 working, 1 needs input``; nothing when there are none): ``counts`` counts rosterd's
    activities, whose ``idle`` is done, idle and error alike."""
    records = snapshot.get("records", [])
    said = [printing.state(record) for record in records if record.get("liveness") != "ended"]
    counted = ", ".join(f"{said.count(word)} {word}" for word in COUNTED if word in said)
    return f": {counted}" if counted else ""


def describe(doc: dict[str, Any], snapshot: dict[str, Any]) -> list[str]:
    counts = doc.get("counts") or {}
    listen = dict(doc.get("listen") or {})
    off = listen.pop("off", None) or {}
    places = [f"{kind} {where}" for kind, where in listen.items() if where]
    places += [f"{kind} off ({why})" for kind, why in off.items()]
    rebuild = doc.get("rebuild") or {}
    return printing.fields(
        [
            ("node", f"{doc.get('node')} ({doc.get('node_id')})"),
            ("version", doc.get("version")),
            ("up", f"{printing.age(doc.get('uptime_s'))} (since {doc.get('started_at')})"),
            ("epoch", f"{doc.get('status_epoch')}, seq {doc.get('seq')}"),
            ("sessions", f"{counts.get('sessions', 0)}{by_state(snapshot)}; {counts.get('ended', 0)} ended"),
            ("streams", doc.get("streams")),
            ("listen", " and ".join(places) or None),
            ("rebuild", f"{rebuild['ms']} ms, {rebuild['sessions']} sessions" if rebuild else None),
        ]
    )


def run(verb: str, args: list[str]) -> int:
    options = parse(args, "usage: rosterd status [--json]", flags=("--json",))
    with Client() as client:
        body = client.get("/status")
        snapshot = None if "--json" in options.flags else json.loads(client.get("/snapshot"))
    if snapshot is None:
        printing.raw(body)
    else:
        for text in describe(json.loads(body), snapshot):
            printing.line(text)
    return 0
