"""``roost events``: every state change of this server's panes, one JSON line each.

The lines come from the events log (``state.events``), filtered to the running server's boot
key: a ``%N`` is reused after a restart, the key is not. ``--reconcile`` is what roost's
tmux config runs when a pane, window or session goes away; it writes the ``closed`` lines.
"""

from __future__ import annotations

import sys
import time

from roost.base import cjson
from roost.base.errors import Expired, NoServer, SetupError, UsageError
from roost.faces.cli.output import notice
from roost.pane.state.events import BadCursor, Cursor, CursorGone, Log
from roost.pane.tmux.panes import list_panes, server_key
from roost.pane.tmux.server import Server

USAGE = "usage: roost events [--follow] [--since CURSOR] [--pane %N] | roost events --reconcile"
CHECK_EVERY = 0.5
LOG_OFF = "the events log is off (ROOST_EVENTS or ROOST_RECORD_DIR is empty); ROOST_EVENTS=DIR turns it on"


def _parse(args: list[str]) -> dict:
    opts: dict = {"follow": False, "since": None, "pane": None, "reconcile": False}
    rest = list(args)
    while rest:
        flag = rest.pop(0)
        if flag == "--follow":
            opts["follow"] = True
        elif flag == "--reconcile":
            opts["reconcile"] = True
        elif flag in ("--since", "--pane"):
            if not rest:
                raise UsageError(f"{USAGE} ({flag} needs a value)")
            opts[flag[2:]] = rest.pop(0)
        else:
            raise UsageError(f"{USAGE} (unknown '{flag}')")
    if opts["reconcile"] and (opts["follow"] or opts["since"] is not None or opts["pane"] is not None):
        raise UsageError(f"{USAGE} (--reconcile takes no other option)")
    if opts["pane"] is not None and not _pane_id(opts["pane"]):
        raise UsageError(f"{USAGE} (--pane takes a %N pane id)")
    return opts


def _pane_id(text: str) -> bool:
    """Whether ``text`` is a ``%N`` pane id: what ``%\\d+`` matches, without importing ``re``,
    which would cost every ``--reconcile`` (one per pane, window or session gone) ~10 ms."""
    return text[:1] == "%" and text[1:].isdecimal()


def _print(lines: list[dict], key: str, pane: str | None) -> None:
    for line in lines:
        if line.get("server") == key and (pane is None or line.get("pane") == pane):
            sys.stdout.write(cjson.document(line))
    sys.stdout.flush()


def _read(log: Log, since: Cursor | None) -> list[dict]:
    try:
        return log.read(since)
    except CursorGone as gone:
        raise Expired(
            f"cursor {gone} is no longer in the log (rotated away or cleared); "
            "re-read roost status --json and start again without --since"
        ) from gone


def _follow(
    server: Server, log: Log, key: str, since: Cursor | None, pane: str | None, position: object
) -> int:
    """Print new lines until the server stops; its last lines are printed before the end.

    ``position`` is the log's position before the last read, so a line added since then
    is read on the first check rather than missed.
    """
    while True:
        time.sleep(CHECK_EVERY)
        alive = server_key(server) == key
        now = log.position()
        if now != position:
            position = now
            lines = _read(log, since)
            if lines:
                since = Cursor.parse(lines[-1]["cursor"])
            _print(lines, key, pane)
        if not alive:
            notice("events", f"the server on socket '{server.socket}' stopped")
            return 0


def _closed_lines(key: str, live: set[str], lines: list[dict]) -> list[dict]:
    """What ``--reconcile`` appends: one ``closed`` line per logged pane that is gone."""
    latest: dict[str, dict] = {}
    for line in lines:
        if line.get("server") == key:
            latest[line.get("pane")] = line
    return [
        {
            "server": key,
            "pane": pane,
            "window": last.get("window"),
            "session_id": last.get("session_id"),
            "event": "closed",
            "from": last.get("to"),
            "to": None,
            "turn": None,
            "reason": "",
        }
        for pane, last in latest.items()
        if last.get("event") != "closed" and pane not in live
    ]


def _reconcile(server: Server, log: Log | None) -> int:
    """Run from tmux hooks: quiet and exit 0 whatever happens, or tmux shows the failure in a pane."""
    if log is None:
        return 0
    panes = list_panes(server)
    if not panes:
        return 0  # the server stopped: tmux runs no hook for its panes, and neither does roost
    key, live = panes[0].server_key, {p.id for p in panes if not p.dead}
    log.append_derived(lambda lines: _closed_lines(key, live, lines))
    return 0


def run(verb: str, args: list[str]) -> int:
    opts = _parse(args)
    server = Server.from_env()
    log = Log.from_env()
    if opts["reconcile"]:
        return _reconcile(server, log)
    try:
        since = Cursor.parse(opts["since"]) if opts["since"] is not None else None
    except BadCursor as bad:
        raise UsageError(f"{USAGE} (--since: {bad})") from bad
    if log is None:
        raise SetupError(LOG_OFF)
    key = server_key(server)
    if key is None:
        raise NoServer(f"no roost server is running on socket '{server.socket}'")
    position = log.position()
    lines = _read(log, since)
    if lines:
        since = Cursor.parse(lines[-1]["cursor"])
    _print(lines, key, opts["pane"])
    if opts["follow"]:
        return _follow(server, log, key, since, opts["pane"], position)
    return 0
