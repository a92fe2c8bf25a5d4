"""``rosterd journal [--swarm] [--since T] [--json]`` and
``rosterd usage [--swarm] [--since T] [--by session|folder|node|day] [--json]``.

``journal`` prints ``GET /journal``: one line per session start, end, suspend, resume and
permission answer, oldest first (``at kind key name harness lane`` and the kind's own words).
``usage`` prints ``GET /usage``: token counts and cost per harness and model (or per session,
folder, node or UTC day with ``--by``), then the total; a cost the price table cannot give is
said to be unknown, never left out of a figure silently.
``--since`` is checked here first, so a bad value is exit 1 whether or not a daemon runs;
``--json`` prints the route's body as sent.

``--swarm`` reads every node's ledger (``GET /swarm/journal``, ``GET /swarm/usage``): one
header line per node (``NODE  heard`` or ``NODE  missing: why``), then the lines with a NODE
column first. When a node's ledger is missing the answer is printed all the same and the verb
exits 3 (a peer needed and unreachable), so a script never takes a partial sum for the whole.
"""

from __future__ import annotations

import json
import time
from urllib.parse import quote

from roost.base.errors import PEER_UNREACHABLE, PeerUnreachable, UsageError
from roost.base.text import shown
from roost.faces.cli.daemonclient import Client
from roost.faces.cli.rosterd import printing
from roost.faces.cli.rosterd.options import parse
from roost.services.ledger.since import parse as parse_since

TYPE_CHECKING = False  # as in roost.base.paths: importing typing costs every verb ~2 ms
if TYPE_CHECKING:
    from typing import Any

USAGE = (
    (
        "journal [--swarm] [--since T] [--json]",
        "session starts, ends, suspends, resumes and permission answers (--swarm: every node's)",
    ),
    (
        "usage [--swarm] [--since T] [--by session|folder|node|day] [--json]",
        "token usage and cost per harness and model, or --by (T: 7d, 3h, 15m, RFC 3339; --swarm: all nodes)",
    ),
)


def entry_line(entry: dict[str, Any], swarm: bool = False) -> list[str]:
    """One journal line's cells: (its node,) when, what, which session, and the kind's own words."""
    if entry.get("kind") == "answer":
        detail = f"{entry.get('answer')} by {entry.get('by')} via {entry.get('via')}"
    elif entry.get("kind") == "act":
        detail = (
            f"{entry.get('action')} by {entry.get('by')} via {entry.get('via')} "
            f"through {entry.get('through')}: {entry.get('status')}"
        )
    else:
        detail = entry.get("reason") or "-"
    cells = [
        entry.get("at"),
        entry.get("kind"),
        entry.get("session_key"),
        entry.get("name") or "-",
        entry.get("harness") or "-",
        entry.get("lane") or "-",
        detail,
    ]
    return [shown(str(cell)) for cell in ([entry.get("node"), *cells] if swarm else cells)]


GROUPS = {
    None: (("HARNESS", "harness"), ("MODEL", "model")),
    "session": (("SESSION", "session_key"), ("NAME", "name"), ("HARNESS", "harness")),
    "folder": (("FOLDER", "folder"),),
    "day": (("DAY", "day"),),
    "node": (),
}
"""The columns that name a row, by what ``--by`` groups."""


def usage_lines(doc: dict[str, Any], swarm: bool = False) -> list[str]:
    """A header, one row per group (and node, for ``--swarm``), and the total."""
    by = doc.get("by")
    named = GROUPS.get(by, GROUPS[None])
    head = [title for title, _ in named]
    header = [*head, "TURNS", "SESSIONS", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "TOTAL", "COST"]
    with_node = swarm or by == "node"
    rows = [["NODE", *header] if with_node else header]
    total = {"node": "total" if by == "node" else "", **(doc.get("total") or {})}
    total.update({key: "" for _, key in named})
    if named:
        total[named[0][1]] = "total"
    for row in [*doc.get("rows", []), total]:
        tokens = row.get("tokens") or {}
        cells = [row.get(key, "-") if row.get(key) is not None else "-" for _, key in named]
        cells += [row.get("turns"), row.get("sessions"), tokens.get("input"), tokens.get("output")]
        cells += [tokens.get("cached_read"), tokens.get("cached_write"), tokens.get("total")]
        cells.append(printing.cost(row))
        rows.append([shown(str(cell)) for cell in ([row.get("node"), *cells] if with_node else cells)])
    return printing.columns(rows)


def node_lines(doc: dict[str, Any]) -> list[str]:
    """One line per node of a swarm ledger: whether its ledger is in the answer, and why not."""
    heads = []
    for row in doc.get("nodes", []):
        said = "heard" if row.get("answered") else f"missing: {row.get('error')}"
        dropped = f" ({row.get('dropped')} lines dropped)" if row.get("dropped") else ""
        heads.append([shown(str(row.get("node"))), shown(said + dropped)])
    return printing.columns(heads)


def missing(doc: dict[str, Any]) -> PeerUnreachable | None:
    """The failure to exit with when a node's ledger is not in a swarm answer."""
    absent = [str(row.get("node")) for row in doc.get("nodes", []) if not row.get("answered")]
    if not absent:
        return None
    return PeerUnreachable(
        f"no ledger from {', '.join(absent)}: the answer holds every other node's", code=PEER_UNREACHABLE
    )


BY = ("session", "folder", "node", "day")


def run(verb: str, args: list[str]) -> int:
    by_usage = " [--by session|folder|node|day]" if verb == "usage" else ""
    usage = f"usage: rosterd {verb} [--swarm] [--since T]{by_usage} [--json]"
    valued = ("--since", "--by") if verb == "usage" else ("--since",)
    options = parse(args, usage, flags=("--json", "--swarm"), valued=valued)
    since, by = options.values.get("--since"), options.values.get("--by")
    if since is not None:
        parse_since(since, time.time())
    if by is not None and by not in BY:
        raise UsageError(f"--by must be one of {', '.join(BY)}")
    swarm = "--swarm" in options.flags
    route = f"/swarm/{verb}" if swarm else f"/{verb}"
    query = [f"since={quote(since)}"] if since is not None else []
    query += [f"by={by}"] if by is not None else []
    path = route + ("?" + "&".join(query) if query else "")
    with Client() as client:
        body = client.get(path)
    doc = json.loads(body)
    if "--json" in options.flags:
        printing.raw(body)
    else:
        lines = [*node_lines(doc), ""] if swarm else []
        if verb == "journal":
            lines += printing.columns([entry_line(entry, swarm) for entry in doc.get("entries", [])])
        else:
            lines += usage_lines(doc, swarm)
        for text in lines:
            printing.line(text)
    failure = missing(doc) if swarm else None
    if failure is not None:
        raise failure
    return 0
