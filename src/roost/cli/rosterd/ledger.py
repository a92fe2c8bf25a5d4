"""``rosterd journal [--since T] [--json]`` and ``rosterd usage [--since T] [--json]``.

``journal`` prints ``GET /journal``: one line per session start, end, suspend, resume and
permission answer, oldest first (``at kind key name harness lane`` and the kind's own words).
``usage`` prints ``GET /usage``: token counts and cost per harness and model, then the total.
``--since`` is checked here first, so a bad value is exit 1 whether or not a daemon runs;
``--json`` prints the route's body as sent.
"""

from __future__ import annotations

import json
import time
from urllib.parse import quote

from roost.cli.daemonclient import Client
from roost.cli.rosterd import printing
from roost.cli.rosterd.options import parse
from roost.ledger.since import parse as parse_since
from roost.text import shown

TYPE_CHECKING = False  # as in roost.paths: importing typing costs every verb ~2 ms
if TYPE_CHECKING:
    from typing import Any

USAGE = (
    ("journal [--since T] [--json]", "session starts, ends, suspends, resumes and permission answers"),
    ("usage [--since T] [--json]", "token usage and cost per harness and model (T: 7d, 3h, 15m, RFC 3339)"),
)


def entry_line(entry: dict[str, Any]) -> list[str]:
    """One journal line's cells: when, what, which session, and the kind's own words."""
    if entry.get("kind") == "answer":
        detail = f"{entry.get('answer')} by {entry.get('by')} via {entry.get('via')}"
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
    return [shown(str(cell)) for cell in cells]


def usage_lines(doc: dict[str, Any]) -> list[str]:
    """A header, one row per harness and model, and the total."""
    header = ["HARNESS", "MODEL", "TURNS", "SESSIONS", "INPUT", "OUTPUT", "TOTAL", "COST"]
    rows = [header]
    for row in [*doc.get("rows", []), {"harness": "total", "model": "", **(doc.get("total") or {})}]:
        tokens = row.get("tokens") or {}
        cost = ", ".join(f"{amount:.4f} {currency}" for currency, amount in (row.get("cost") or {}).items())
        cells = [row.get("harness"), row.get("model"), row.get("turns"), row.get("sessions")]
        cells += [tokens.get("input"), tokens.get("output"), tokens.get("total"), cost or "-"]
        rows.append([shown(str(cell)) for cell in cells])
    return printing.columns(rows)


def run(verb: str, args: list[str]) -> int:
    usage = f"usage: rosterd {verb} [--since T] [--json]"
    options = parse(args, usage, flags=("--json",), valued=("--since",))
    since = options.values.get("--since")
    if since is not None:
        parse_since(since, time.time())
    path = f"/{verb}" if since is None else f"/{verb}?since={quote(since)}"
    with Client() as client:
        body = client.get(path)
    if "--json" in options.flags:
        printing.raw(body)
        return 0
    doc = json.loads(body)
    if verb == "journal":
        for text in printing.columns([entry_line(entry) for entry in doc.get("entries", [])]):
            printing.line(text)
    else:
        for text in usage_lines(doc):
            printing.line(text)
    return 0
