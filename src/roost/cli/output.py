"""What every face prints: schema-1 JSON documents and stderr notices."""

from __future__ import annotations

import json
import sys

SCHEMA = 1


def document(command: str, **fields: object) -> None:
    """Print one ``--json`` document: one line, ``schema`` and ``command`` first."""
    doc = {"schema": SCHEMA, "command": command, **fields}
    sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def notice(command: str, message: str) -> None:
    """A line for the person on stderr, prefixed with the command that says it."""
    sys.stderr.write(f"roost {command}: {message}\n")
    sys.stderr.flush()


def decode(data: bytes) -> tuple[str, bool]:
    """Text as valid UTF-8 and whether anything had to be replaced."""
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace"), True
