"""What the rosterd verbs print: API bodies exactly as they came, and lines for people.

``--json`` output is the daemon's own bytes plus one newline, never re-encoded, so a script
reading ``rosterd list --json`` sees what ``GET /snapshot`` sent. Everything else here is for
people, and scripts must not parse it (the spec's one rule for agents); what came from outside
(a name, a folder, a reason) is escaped in it by :func:`roost.base.text.shown`, so no byte of it
acts on the reader's terminal.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterable, Sequence
from datetime import datetime

from roost.base.text import shown
from roost.faces.cli import output
from roost.pane.state import words

TYPE_CHECKING = False  # as in roost.base.paths: importing typing costs every verb ~2 ms
if TYPE_CHECKING:
    from typing import Any

SHOWN_LIVENESS = ("suspended", "stale", "ended")
"""Liveness words that replace the state column: a suspended session is not "idle"."""
UNKNOWN = "unknown"
"""The state column of a session nothing has said a state of yet (``roost status`` leaves it blank)."""


def raw(body: bytes) -> None:
    """Print an API body (or an SSE data line) byte for byte, then a newline, and flush so a
    pipe reader gets each line as it happens."""
    out = sys.stdout.buffer
    out.write(body + b"\n")
    out.flush()


FAINT, PLAIN = "\x1b[2m", "\x1b[22m"
"""SGR faint and back: how a terminal dims a line, as the web app dims a node it cannot reach."""


def line(text: str, faint: bool = False) -> None:
    """One line (or several) for people, with every control character but newline and tab
    escaped; ``faint`` (a session served from a lost node's last frame) draws it dimmed on a
    terminal, unless ``NO_COLOR`` is set (https://no-color.org)."""
    if faint and sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
        sys.stdout.write(f"{FAINT}{shown(text, lines=True)}{PLAIN}\n")
        sys.stdout.flush()
        return
    output.line(text)


def seconds_since(stamp: str | None, now: float) -> float | None:
    if not stamp:
        return None
    return max(0.0, now - datetime.fromisoformat(stamp).timestamp())


def age(seconds: float | None) -> str:
    """``4s``, ``58s``, ``4m``, ``2h``, ``3d``: one unit, rounded down, as the spec's list shows."""
    if seconds is None:
        return "-"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def label(record: dict[str, Any]) -> str:
    """The display name, else ``[basename of the cwd]``, as every rosterd client shows it."""
    if record.get("name"):
        return str(record["name"])
    cwd = record.get("cwd")
    return f"[{os.path.basename(cwd.rstrip('/')) or cwd}]" if cwd else "[?]"


def state(record: dict[str, Any]) -> str:
    """The session's state in the words every face uses (``working``, ``needs input``,
    ``done``, ``idle``, ``error``: ``roost.pane.state.words.HUMAN``), from the record's ``state``
    (or, from a peer that sends none, its activity); its liveness instead when it is not live."""
    liveness = record.get("liveness")
    if liveness in SHOWN_LIVENESS:
        return str(liveness)
    return words.human(record.get("state") or words.state_of(record.get("activity"))) or UNKNOWN


def stale(record: dict[str, Any]) -> bool:
    """Whether the record is a lost node's, served from its last frame (``--swarm``)."""
    return record.get("peer_state") == "unreachable"


def cost(row: dict[str, Any], places: int = 4) -> str:
    """A cost as a person reads it (a usage row's, a session's ``spend``): each currency's known
    amount, and what is unknown; ``-`` when nothing was counted."""
    known = [f"{amount:.{places}f} {currency}" for currency, amount in (row.get("cost") or {}).items()]
    unpriced = row.get("unpriced") or 0
    if unpriced:
        turns = "turn" if unpriced == 1 else "turns"
        known.append(f"unknown for {unpriced} {turns}" if known else "unknown")
    return ", ".join(known) or "-"


BUDGET_WORDS = {"exceeded": "over budget", "warning": "near budget"}
"""What the table says of a session a budget is at: its ``budget`` state in words (a lifted one
says nothing: prompts go through)."""


def spent(record: dict[str, Any]) -> str:
    """What a session cost, and whether a budget holds it, for the table: blank for a session
    nothing was counted of, so a roster of agents with no usage reads as it always did."""
    spend, budget = record.get("spend"), record.get("budget") or {}
    said = cost(spend, 2) if isinstance(spend, dict) and spend.get("turns") else ""
    held = BUDGET_WORDS.get(budget.get("state"), "") if isinstance(budget, dict) else ""
    return " ".join(part for part in (said, held) if part)


def row(record: dict[str, Any], now: float) -> list[str]:
    """name, harness, state, age, lane, node, pid: the columns of ``rosterd list``, each
    escaped whole (a newline too), so a cell is one line and its width is what shows; then
    what the session cost (blank when nothing was counted; ``over budget`` or ``near budget``
    where a budget holds it) and, for a session of a node served stale, ``stale`` and how long
    ago it was last heard (the table says it in words, for a pipe and a screen reader; a
    terminal also dims the row)."""
    since = record.get("activity_at") or record.get("started_at")
    gone = record.get("liveness") in ("suspended", "ended")
    cells = [
        label(record),
        record.get("harness") or "-",
        state(record),
        age(seconds_since(since, now)),
        record.get("lane") or "-",
        record.get("node") or "-",
        "-" if gone else str(record.get("pid", "-")),
        spent(record),
        f"stale {age((record.get('peer_age_ms') or 0) / 1000)}" if stale(record) else "",
    ]
    return [shown(str(cell)) for cell in cells]


def columns(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows as aligned text, two spaces between columns, no trailing blanks."""
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(size) for cell, size in zip(r, widths, strict=True)).rstrip() for r in rows]


def roster(snapshot: dict[str, Any], now: float | None = None) -> list[str]:
    """A snapshot document as the lines of ``rosterd list``."""
    moment = time.time() if now is None else now
    return columns([row(record, moment) for record in snapshot.get("records", [])])


def value(item: Any) -> str:
    return item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)


def fields(pairs: Iterable[tuple[str, Any]]) -> list[str]:
    """``name  value`` lines, names aligned; a value's later lines indented under the first."""
    listed = [(shown(name), shown(value(item), lines=True)) for name, item in pairs if item is not None]
    if not listed:
        return []
    width = max(len(name) for name, _ in listed)
    indent = "\n" + " " * (width + 2)
    return [f"{name:<{width}}  {text.replace(chr(10), indent)}" for name, text in listed]
