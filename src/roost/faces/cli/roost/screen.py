"""``roost screen``: what is on a pane's screen, chrome and all, with no notice.

Where ``read`` wants what an agent said, ``screen`` is for what a pane shows: a shell, a log
tail, a pager, or an agent whose input box is stuck. A window target means the pane tmux
itself would pick, the window's active one.
"""

from __future__ import annotations

import sys

from roost.base.errors import UsageError
from roost.faces.cli.output import decode, document
from roost.pane.tmux import capture
from roost.pane.tmux.panes import Pane
from roost.pane.tmux.server import Server
from roost.pane.tmux.targets import resolve

USAGE = "usage: roost screen [--json] TARGET [LINES|+FIRST]"
DEFAULT_LINES = 40
DIGITS = 9
"""Digits LINES or FIRST may hold: no scrollback is a billion rows long, and ``int()`` refuses a
string of thousands of digits (ValueError) rather than reading it."""


def _positive(value: str) -> int | None:
    if not (value.isascii() and value.isdigit()) or len(value) > DIGITS:
        return None
    return int(value) or None


def _shown(value: str) -> str:
    return value if len(value) <= DIGITS + 1 else f"{value[: DIGITS + 1]}…"


def _span(value: str) -> tuple[int | None, int | None]:
    """LINES as ``(count, None)``, or ``+FIRST`` as ``(None, first row)``."""
    if value.startswith("+"):
        first = _positive(value[1:])
        if first is None:
            what = f"a positive row number of at most {DIGITS} digits"
            raise UsageError(f"{USAGE} (+FIRST must be {what}, not '{_shown(value)}')")
        return None, first
    count = _positive(value)
    if count is None:
        what = f"a positive whole number of at most {DIGITS} digits"
        raise UsageError(f"{USAGE} (LINES must be {what}, not '{_shown(value)}')")
    return count, None


def _parse(args: list[str]) -> tuple[str, int | None, int | None, bool]:
    rest = list(args)
    as_json = False
    while rest and rest[0].startswith("-"):
        flag = rest.pop(0)
        if flag == "--":
            break
        if flag != "--json":
            raise UsageError(f"{USAGE} (unknown option '{flag}')")
        as_json = True
    if not rest or len(rest) > 2:
        raise UsageError(USAGE)
    count, first = _span(rest[1]) if len(rest) == 2 else (DEFAULT_LINES, None)
    return rest[0], count, first, as_json


def _active(panes: list[Pane]) -> Pane:
    return next((p for p in panes if p.active), panes[0])


def run(verb: str, args: list[str]) -> int:
    target, count, first, as_json = _parse(args)
    server = Server.from_env()
    pane = _active(resolve(server, target).panes)
    rows = capture.capture(server, pane.id, dead=pane.dead)
    data = (
        capture.from_row(rows, first)
        if first is not None
        else capture.last_lines(rows, count or DEFAULT_LINES)
    )
    if as_json:
        text, lossy = decode(data)
        document("screen", target=target, pane=pane.id, lines=count, text=text, lossy=lossy)
        return 0
    if data:
        sys.stdout.buffer.write(data + b"\n")
        sys.stdout.flush()
    return 0
