"""Starting the adapter, the holder's first act: before the holder loads its event loop.

A session's opening waits on the adapter's own start (a Node runtime loading its bundle: the
longest part of ``initialize``), and the holder's imports (asyncio, ~40 ms) come before it
can relay anything. Started first, the adapter loads beside them (``bench/headless_adapters.py``
times the steps). So this module imports nothing of asyncio, and the holder becomes the
subreaper of its tree before the adapter can leave an orphan.

Until the loop takes the signals over, a SIGTERM or SIGINT is only noted (:func:`hold_signals`)
for the holder to act on once it runs, so an early stop still ends the adapter it started. The
notes are Python handlers, which the adapter's ``exec`` resets to the defaults: an ignored
signal would be inherited.
"""

from __future__ import annotations

import os
import signal
import subprocess

from roost.base import paths
from roost.headless.holder import tree
from roost.headless.holder.statefile import Session

STOPS = (signal.SIGTERM, signal.SIGINT)
"""The signals that stop a holder; SIGHUP (its terminal, if it had one, going away) does not."""


def hold_signals() -> list[int]:
    """Note the stopping signals that arrive before the loop handles them; the list they go in."""
    noted: list[int] = []
    for signum in (*STOPS, signal.SIGHUP):
        signal.signal(signum, lambda number, _frame: noted.append(number))
    return noted


def spawn(session: Session) -> subprocess.Popen[bytes]:
    """Start the adapter with pipes for its stdin and stdout, its standard error to the
    session's file; ``OSError`` when it will not start."""
    tree.become_subreaper()
    errors: int = subprocess.DEVNULL
    if session.stderr:
        errors = os.open(session.stderr, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    try:
        return subprocess.Popen(
            session.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            cwd=session.cwd,
            env={**os.environ, **session.env, paths.HOLDER_MARK_ENV: session.key},
        )
    finally:
        if errors != subprocess.DEVNULL:
            os.close(errors)
