"""Text from outside on a terminal: what one line may not hold, and how it is shown to people.

A name, a label or a harness word reaches tables and terminals as it is, so a control character
in it acts instead of showing: an ESC starts a window title or clears the screen, a newline
fakes a row, a bidirectional override reorders what a person reads. Values that are one line by
contract refuse such characters at the door (:func:`control`, which claims and the launcher
ask); everything else from outside (a folder, a reason, a reply) is escaped where a printer for
people writes it (:func:`shown`). ``--json`` output is JSON-escaped already and a pane's own
bytes (``roost screen``, ``roost read``) are a terminal's by contract: neither comes here.

Text from outside is not always UTF-8: an argument of a command line, or a hook's event cut
in the middle of a character. Python hands such bytes over as lone surrogates, which no UTF-8
writer takes, so each reader decides: text kept as bytes (a reply) gets them back
(:func:`as_bytes`), text kept as text (a reason, a ``--json`` field) shows U+FFFD in their
place (:func:`well_formed`), and a value that must be exact (a path, a name) is refused
(:func:`utf8` says which).

The hook and every verb load this module, so it imports only ``codecs``, which every
interpreter has loaded before it runs a line.
"""

from __future__ import annotations

import codecs

_SHAPE_ONLY = (
    frozenset("\u0085\u2028\u2029\u200e\u200f")
    | frozenset(map(chr, range(0x202A, 0x202F)))
    | frozenset(map(chr, range(0x2066, 0x206A)))
)
"""Characters outside C0 and C1 that still move or reorder text: NEL, the line and paragraph
separators, and the bidirectional marks, embeddings, overrides and isolates."""

_REFUSED = frozenset(map(chr, range(0x20))) | frozenset(map(chr, range(0x7F, 0xA0))) | _SHAPE_ONLY
REFUSED_CLASS = r"\x00-\x1f\x7f-\x9f\u0085\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069"
"""The characters :func:`control` refuses, as the inside of a regular expression's class (for
the OpenAPI document: one-line text is ``[^…]*``)."""

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


def utf8(text: str) -> bool:
    """Whether ``text`` is all valid UTF-8: it holds no lone surrogate, which is how Python
    hands over bytes that were not UTF-8 (``surrogateescape``) and JSON an escaped half of
    a pair (``"\\ud83d"``)."""
    if text.isascii():
        return True
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def well_formed(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD: one for each byte that was not
    UTF-8, one for each half of a pair. For text kept as text, which must be UTF-8 to be
    written at all (an events-log line, a ``--json`` document)."""
    if utf8(text):
        return text
    return "".join("\ufffd" if "\ud800" <= char <= "\udfff" else char for char in text)


def _own_bytes(error: UnicodeError) -> tuple[bytes, int]:
    """The encoding error handler behind :func:`as_bytes`."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    bad = error.object[error.start : error.end]
    escaped = range(0xDC80, 0xDD00)  # the bytes surrogateescape could not decode
    kept = b"".join(
        bytes((ord(c) - 0xDC00,)) if ord(c) in escaped else c.encode("utf-8", "surrogatepass") for c in bad
    )
    return kept, error.end


codecs.register_error("roost-own-bytes", _own_bytes)


def as_bytes(text: str) -> bytes:
    """``text`` as the bytes it came from, for text kept as bytes (a reply): UTF-8, where each
    byte that was not UTF-8 (a lone surrogate from ``surrogateescape``) is that byte again and
    a lone half of a pair (from a JSON escape) is written as ``surrogatepass`` writes it. Both
    leave bytes that are not UTF-8, so a reader that needs text replaces them and says so
    (``roost read --json``: ``"lossy": true``) rather than the text passing for clean."""
    return text.encode("utf-8", "roost-own-bytes")
