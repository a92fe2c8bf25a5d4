"""What every face prints: schema-1 JSON documents and stderr notices, and how a face stops
printing when nobody reads any more.

A reader that goes (``roost status | head -1``, ``rosterd list | grep -q x``) ends the verb
quietly with exit status 0, ``READER_GONE``: a reader that has seen enough is no failure of
the writer, so under ``set -o pipefail`` a pipeline fails only when a verb itself failed, and
those failures keep their own codes (a verb that finished keeps its status even when its last
flush finds the reader gone). Both CLIs' ``main`` run every verb through :func:`to_reader`.
Tables, notices and failures are for people and often quote what came from outside (a target,
a name, a daemon's message), so they are escaped by :func:`roost.base.text.shown` on the way out.
"""

from __future__ import annotations

import os
import sys

from roost.base.text import shown

TYPE_CHECKING = False  # as in roost.base.paths: importing typing costs every verb ~2 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TextIO

SCHEMA = 1
READER_GONE = 0
INTERRUPTED = 130
"""The exit status of a verb a person interrupted (Ctrl-C), as a shell gives one killed by SIGINT."""


class ReaderGone(BaseException):
    """Raised in the main thread when stdout's reader goes while a follow stream waits.

    A ``BaseException``, as ``KeyboardInterrupt`` is, because it interrupts whatever the stream
    is blocked in: the daemon's client turns an ``OSError`` in its read into "unreachable",
    and this must pass through that unchanged to reach :func:`to_reader`.
    """


def document(command: str, **fields: object) -> None:
    """Print one ``--json`` document: one line, ``schema`` and ``command`` first, written by
    :func:`roost.base.cjson.document` as every JSON document roost writes is."""
    from roost.base import cjson  # every verb's ``main`` imports this module; most print no JSON

    doc = {"schema": SCHEMA, "command": command, **fields}
    sys.stdout.write(cjson.document(doc))
    sys.stdout.flush()


def line(text: str) -> None:
    """A line (or several) for people on stdout, escaped as notices are; newlines and tabs are
    kept. The human tables of both CLIs print through this, ``--json`` never does."""
    sys.stdout.write(shown(text, lines=True) + "\n")
    sys.stdout.flush()


def notice(command: str, message: str) -> None:
    """A line for the person on stderr, prefixed with the command that says it."""
    sys.stderr.write(shown(f"roost {command}: {message}", lines=True) + "\n")
    sys.stderr.flush()


def complain(text: str) -> None:
    """A failure's line on stderr. A stderr nobody reads (``2>&1 | true``) loses the line but
    not the failure: the caller still returns the failure's exit status."""
    try:
        sys.stderr.write(shown(text, lines=True))
        sys.stderr.flush()
    except BrokenPipeError:
        _to_devnull(sys.stderr)


def decode(data: bytes) -> tuple[str, bool]:
    """Text as valid UTF-8 and whether anything had to be replaced."""
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace"), True


def to_reader(verb: Callable[[], int], follow: bool = False) -> int:
    """Run ``verb`` and return its exit status, ``READER_GONE`` if stdout's reader went first,
    or ``INTERRUPTED`` if a person interrupted it.

    The write that finds the reader gone raises ``BrokenPipeError`` and the verb stops there.
    Its unwritten output is dropped by pointing stdout at /dev/null, as Python's documentation
    of ``SIGPIPE`` advises, so the interpreter's own flush at exit cannot fail a second time.
    A ``follow`` verb (a stream that waits between lines, maybe for hours) is also ended as
    soon as its reader goes, not at its next line: see :mod:`roost.faces.cli.readerwatch`.
    """
    status = READER_GONE
    try:
        watch = None
        if follow:
            from roost.faces.cli.readerwatch import ReaderWatch

            watch = ReaderWatch.start()
        try:
            status = verb()
            if sys.stdout is not None:
                sys.stdout.flush()
        finally:
            if watch is not None:
                watch.stop()
    except (BrokenPipeError, ReaderGone):
        _to_devnull(sys.stdout)
    except KeyboardInterrupt:
        # What is still buffered goes nowhere: a terminal nobody reads any more (a follow
        # verb's, full) would hold the exit up for good in the flush.
        _to_devnull(sys.stdout)
        status = INTERRUPTED
    return status


def _to_devnull(stream: TextIO | None) -> None:
    if stream is not None:
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
