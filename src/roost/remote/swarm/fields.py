"""The typed checks every swarm document's fields are made of, strict and bounded.

Each returns the value when it is exactly the type and shape named, and None otherwise, so
each document refuses with its own code. ``bool`` is never taken for an integer.
"""

from __future__ import annotations

import base64
import binascii

KEY_BYTES = 32
MAX_TEXT = 256
MAX_NAME = 64


def b64(data: bytes) -> str:
    """base64url without padding: keys and signatures on the wire."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64(text: object, size: int | None = None) -> bytes | None:
    """The bytes of a base64url text (no padding, nothing else), ``size`` long when given;
    None for anything else, so a caller refuses with its own code."""
    if not isinstance(text, str) or len(text) > 4096 or len(text) % 4 == 1:
        return None
    if not text.isascii() or not all(c.isalnum() or c in "-_" for c in text):
        return None
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None
    if b64(data) != text or (size is not None and len(data) != size):
        return None  # a non-canonical spelling of the same bytes is refused too
    return data


def text(value: object, limit: int = MAX_TEXT) -> str | None:
    """One line of printable text, 1 to ``limit`` characters."""
    if not isinstance(value, str) or not 0 < len(value) <= limit or not value.isprintable():
        return None
    return value


def name(value: object) -> str | None:
    """A node's name: one line of printable text, 1 to ``MAX_NAME`` characters, with no ``/``
    (it is a path segment of ``/swarm/{node}/…``) and no space at either end (a name is typed
    after ``--node``)."""
    found = text(value, MAX_NAME)
    if found is None or "/" in found or found != found.strip():
        return None
    return found


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
