"""The typed checks every swarm document's fields are made of, strict and bounded.

Each returns the value when it is exactly the type and shape named, and None otherwise, so
each document refuses with its own code. ``bool`` is never taken for an integer.
"""

from __future__ import annotations

from roost.swarm.identity import KEY_BYTES, unb64

MAX_TEXT = 256


def text(value: object, limit: int = MAX_TEXT) -> str | None:
    """One line of printable text, 1 to ``limit`` characters."""
    if not isinstance(value, str) or not 0 < len(value) <= limit or not value.isprintable():
        return None
    return value


def node_id(value: object) -> str | None:
    """A node id as ``node.key`` holds one: printable, at most 64, no ``:`` (session keys use it)."""
    ident = text(value, 64)
    return None if ident is None or ":" in ident or " " in ident else ident


def hex_text(value: object, size: int) -> str | None:
    """Exactly ``size`` lowercase hex digits."""
    if not isinstance(value, str) or len(value) != size or not all(c in "0123456789abcdef" for c in value):
        return None
    return value


def integer(value: object, low: int = 0, high: int = 1 << 62) -> int | None:
    """An ``int`` (not a ``bool``) from ``low`` to ``high``."""
    if type(value) is not int or not low <= value <= high:
        return None
    return value


def key(value: object) -> bytes | None:
    """A raw 32-byte public key from its base64url text."""
    return unb64(value, KEY_BYTES)
