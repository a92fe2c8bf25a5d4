"""Text from outside on a terminal: what one line may not hold, and how it is shown to people.

A name, a label or a harness word reaches tables and terminals as it is, so a control character
in it acts instead of showing: an ESC starts a window title or clears the screen, a newline
fakes a row, a bidirectional override reorders what a person reads. Values that are one line by
contract refuse such characters at the door (:func:`control`, which claims and the launcher
ask); everything else from outside (a folder, a reason, a reply) is escaped where a printer for
people writes it (:func:`shown`). ``--json`` output is JSON-escaped already and a pane's own
bytes (``roost screen``, ``roost read``) are a terminal's by contract: neither comes here.
This module imports nothing, because the hook and every verb load it.
"""

from __future__ import annotations

_SHAPE_ONLY = (
    frozenset("\u0085\u2028\u2029\u200e\u200f")
    | frozenset(map(chr, range(0x202A, 0x202F)))
    | frozenset(map(chr, range(0x2066, 0x206A)))
)
"""Characters outside C0 and C1 that still move or reorder text: NEL, the line and paragraph
separators, and the bidirectional marks, embeddings, overrides and isolates."""

_REFUSED = frozenset(map(chr, range(0x20))) | frozenset(map(chr, range(0x7F, 0xA0))) | _SHAPE_ONLY

_ESCAPES = {
    ord(char): f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}" for char in _REFUSED
}
_ESCAPES_KEEPING_LINES = {code: escape for code, escape in _ESCAPES.items() if code not in (0x09, 0x0A)}


def control(text: str) -> str | None:
    """The first character a one-line value may not hold (C0, DEL, C1, a line or paragraph
    separator, a bidirectional control), or None."""
    for char in text:
        if char in _REFUSED:
            return char
    return None


def shown(text: str, lines: bool = False) -> str:
    """``text`` with each character :func:`control` refuses written as ``\\xNN`` or ``\\uNNNN``
    (ESC as ``\\x1b``), so it shows on a terminal instead of acting on it. ``lines`` keeps
    newlines and tabs as they are, for a printer whose text is many lines (a message, a recap)."""
    return text.translate(_ESCAPES_KEEPING_LINES if lines else _ESCAPES)
