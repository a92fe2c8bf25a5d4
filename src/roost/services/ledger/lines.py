"""An append-only JSON lines file that can never grow without bound.

Each :meth:`Lines.append` is one small write to ``NAME`` (mode 0600, in a 0700 directory), never
fsynced: a lost last line after a power cut costs less than a disk flush per session event.
When a line would take the file past ``cap`` bytes, the file becomes ``NAME.1`` (replacing the
one before) and a new one is begun, so the two hold at most ``2 × cap`` bytes and always the
newest lines.

:meth:`Lines.read` may run in another thread while the daemon appends: it opens the current
file before the older one, and when a rotation came between the two opens (both are then the
same file) it reads that file once. A line that is not a JSON object (the half of a line being
written, a hand edit) is skipped; a file that is missing is empty, one that cannot be read is
an ``OSError`` for the reader to report.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from roost.base import paths

log = logging.getLogger("rosterd")

CAP = 4 * 1024 * 1024
"""Bytes one file holds before it is rotated: tens of thousands of lines."""


class Lines:
    """One bounded JSON lines file and its one older generation."""

    def __init__(self, path: Path, cap: int = CAP) -> None:
        if cap < 1024:
            raise ValueError("a lines file holds at least 1024 bytes")
        self.path = path
        self.older = path.with_name(path.name + ".1")
        self.cap = cap
        self._lock = threading.Lock()
        self._failed = False

    def append(self, doc: dict[str, Any]) -> bool:
        """Add one line; False when the disk refused it (logged once until a write works again:
        the ledger is a record of the roster, never a reason to stop keeping it)."""
        line = (json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        try:
            with self._lock:
                self._write(line)
        except OSError as error:
            if not self._failed:
                log.warning("could not write to %s: %s", self.path, error)
            self._failed = True
            return False
        self._failed = False
        return True

    def _write(self, line: bytes) -> None:
        paths.private_mkdir(self.path.parent)
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            size = 0
        if size and size + len(line) > self.cap:
            os.replace(self.path, self.older)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)

    def read(self) -> Iterator[dict[str, Any]]:
        """Every line kept, oldest first."""
        for file in self._files():
            with file:
                for raw in file:
                    with contextlib.suppress(ValueError):
                        doc = json.loads(raw)
                        if isinstance(doc, dict) and raw.endswith(b"\n"):
                            yield doc

    def matches(self, pattern: re.Pattern[bytes]) -> Iterator[re.Match[bytes]]:
        """Every match of ``pattern`` (one per line at most: anchor it to a line), oldest first:
        what a daemon that is starting reads back, many times faster than a JSON document a line."""
        for file in self._files():
            with file:
                yield from pattern.finditer(file.read())

    def _files(self) -> list[BinaryIO]:
        """The older file, then the current one, open; the same file once if a rotation came
        between the two opens."""
        current = _open_read(self.path)
        older = _open_read(self.older)
        if current and older and os.fstat(current.fileno()).st_ino == os.fstat(older.fileno()).st_ino:
            older.close()
            older = None
        return [file for file in (older, current) if file is not None]


def _open_read(path: Path) -> BinaryIO | None:
    try:
        return open(path, "rb")
    except (FileNotFoundError, NotADirectoryError):
        return None
