"""``rosterd journal [--swarm] [--since T] [--json]`` and ``rosterd usage [--swarm] [--since T] [--json]``.

``journal`` prints ``GET /journal``: one line per session start, end, suspend, resume and
permission answer, oldest first (``at kind key name harness lane`` and the kind's own words).
``usage`` prints ``GET /usage``: token counts and cost per harness and model, then the total.
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

from roost.base.errors import PEER_UNREACHABLE, PeerUnreachable
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
        "usage [--swarm] [--since T] [--json]",
        "token usage and cost per harness and model (T: 7d, 3h, 15m, RFC 3339; --swarm: every node's)",
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


def usage_lines(doc: dict[str, Any], swarm: bool = False) -> list[str]:
    """A header, one row per harness and model (and node, for ``--swarm``), and the total."""
    header = ["HARNESS", "MODEL", "TURNS", "SESSIONS", "INPUT", "OUTPUT", "TOTAL", "COST"]
    rows = [["NODE", *header] if swarm else header]
    total = {"node": "", "harness": "total", "model": "", **(doc.get("total") or {})}
    for row in [*doc.get("rows", []), total]:
        tokens = row.get("tokens") or {}
        cost = ", ".join(f"{amount:.4f} {currency}" for currency, amount in (row.get("cost") or {}).items())
        cells = [row.get("harness"), row.get("model"), row.get("turns"), row.get("sessions")]
        cells += [tokens.get("input"), tokens.get("output"), tokens.get("total"), cost or "-"]
        rows.append([shown(str(cell)) for cell in ([row.get("node"), *cells] if swarm else cells)])
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


def run(verb: str, args: list[str]) -> int:
    usage = f"usage: rosterd {verb} [--swarm] [--since T] [--json]"
    options = parse(args, usage, flags=("--json", "--swarm"), valued=("--since",))
    since = options.values.get("--since")
    if since is not None:
        parse_since(since, time.time())
    swarm = "--swarm" in options.flags
    route = f"/swarm/{verb}" if swarm else f"/{verb}"
    path = route if since is None else f"{route}?since={quote(since)}"
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
