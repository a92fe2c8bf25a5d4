"""The bytes a signature covers: canonical JSON, and signing a document by its own fields.

Canonical JSON here is keys sorted, no spaces, text as UTF-8 (not ``\\u``-escaped), and only
what every JSON implementation spells one way: objects with text keys, arrays, text,
integers, booleans and null. Floats are refused, because two languages can print one
differently and a signature must not depend on who printed it. (``roost.base.cjson`` writes
roost's documents in insertion order for people; this is the other question.)

A signed document carries its signature in ``signature`` (Ed25519, base64url) over the
canonical bytes of every other field, unknown ones included: a node keeps the fields it does
not know, so a newer node's signature still verifies after an older one has passed it on.
"""

from __future__ import annotations

import json
import re

from roost.remote.swarm.fields import b64, unb64
from roost.remote.swarm.identity import Identity, verify

MAX_DEPTH = 16
MAX_DOCUMENT = 1 << 20
"""A peer's document larger than this (1 MiB) is refused before it is parsed."""
SIGNATURE = "signature"


def encode(value: object) -> bytes:
    """``value`` as canonical JSON bytes; ``ValueError`` for what canonical JSON cannot hold."""
    _check(value, 0)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _check(value: object, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH}")
    if value is None or isinstance(value, (bool, int)):
        return
    if isinstance(value, str):
        value.encode("utf-8")  # a lone surrogate cannot be UTF-8: UnicodeEncodeError
        return
    if isinstance(value, list):
        for item in value:
            _check(item, depth + 1)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError("an object key that is not text")
            key.encode("utf-8")
            _check(item, depth + 1)
        return
    raise ValueError(f"{type(value).__name__} has no canonical JSON form")


def _unique(pairs: list[tuple[str, object]]) -> dict[str, object]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise ValueError("an object names one key twice")
    return found


def _no_float(text: str) -> object:
    raise ValueError("a number that is not an integer")


def parse(data: bytes | str, limit: int = MAX_DOCUMENT) -> object:
    """A peer's JSON, parsed strictly: at most ``limit`` bytes (``MAX_DOCUMENT`` but for the
    one route that carries files, a handoff), no key twice in one object (two readers could
    pick different ones), no floats, NaN or infinities, nesting at most ``MAX_DEPTH``;
    ``ValueError`` otherwise."""
    if len(data) > limit:
        raise ValueError(f"larger than {limit} bytes")
    raw, text = (data, data.decode("utf-8")) if isinstance(data, bytes) else (data.encode("utf-8"), data)
    if _depth(raw) > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH}")
    return json.loads(text, object_pairs_hook=_unique, parse_float=_no_float, parse_constant=_no_float)


def _depth(data: bytes) -> int:
    """The deepest nesting of brackets outside strings, counted before the parser recurses.

    A peer's member set is a megabyte, and a loop in Python over each character cost a dozen
    times the parse. So C does the reading: escapes go first (a backslash and what it
    escapes), then every byte but quotes and brackets (UTF-8 spells no other character with
    these bytes), then each string left (now only the brackets it held), and only the brackets
    outside strings are walked here. Text that is not JSON (a string left open, a backslash
    outside one) may be counted otherwise than it reads, but only after the point where the
    parser refuses it, so it never recurses deeper than counted."""
    if b"\\" in data:
        data = _ESCAPE.sub(b"", data)
    brackets = _STRING.sub(b"", data.translate(None, _NOT_STRUCTURE))
    deepest = depth = 0
    for byte in brackets:
        if byte in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


_ESCAPE = re.compile(rb"\\.", re.DOTALL)
_NOT_STRUCTURE = bytes(byte for byte in range(256) if byte not in b'"[]{}')
_STRING = re.compile(rb'"[^"]*"')


def unsigned(document: dict[str, object]) -> bytes:
    """The canonical bytes of ``document`` without its ``signature``: what is signed."""
    return encode({key: value for key, value in document.items() if key != SIGNATURE})


def sign(document: dict[str, object], identity: Identity) -> dict[str, object]:
    """A copy of ``document`` with ``signature`` set to ``identity``'s signature of the rest."""
    signed = {key: value for key, value in document.items() if key != SIGNATURE}
    signed[SIGNATURE] = b64(identity.sign(unsigned(signed)))
    return signed


def verified(document: dict[str, object], public_key: bytes) -> bool:
    """Whether ``document``'s ``signature`` is ``public_key``'s over the rest of it."""
    signature = unb64(document.get(SIGNATURE), 64)
    if signature is None:
        return False
    try:
        data = unsigned(document)
    except ValueError:
        return False
    return verify(public_key, signature, data)
