"""Owning a process tree: being its subreaper, and ending all of it in bounded time.

An adapter's tools may run in process groups of their own (Claude's Bash tool does), so
killing the adapter's group leaves them running, and once their parent exits they would be
re-parented to init and lost. As a child subreaper the holder inherits every orphan below it
instead, so its own children, walked recursively, are the whole tree.

``psutil`` is imported on first use: a holder starts before every session's first turn, and
the tree is first walked seconds later (the first reap), or when the session ends.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psutil

PR_SET_CHILD_SUBREAPER = 36
REAP_EVERY = 2.0
"""How often orphaned tools that exited are collected while the session runs."""


def become_subreaper() -> bool:
    """Ask Linux to re-parent orphaned descendants to this process; whether it agreed."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def descendants() -> list[psutil.Process]:
    """Every live process below this one (orphans included, this being their subreaper)."""
    import psutil

    try:
        return psutil.Process().children(recursive=True)
    except psutil.Error:
        return []


def end_all(grace: float) -> None:
    """SIGTERM every descendant, then SIGKILL whatever still lives after ``grace`` seconds, and
    reap what it ended. Called once the adapter itself has exited and been reaped."""
    import psutil

    tree = descendants()
    for proc in tree:
        _signal(proc, signal.SIGTERM)
    _, alive = psutil.wait_procs(tree, timeout=grace)
    # A process that forked while being ended has children the first walk did not see.
    alive = list({proc.pid: proc for proc in [*alive, *descendants()]}.values())
    for proc in alive:
        _signal(proc, signal.SIGKILL)
    psutil.wait_procs(alive, timeout=grace)
    reap()


def reap(skip: frozenset[int] = frozenset()) -> None:
    """Collect every exited child but ``skip`` (re-parented orphans too), so none stays a zombie.

    ``skip`` is for a child whose exit status someone else collects: reaped here, the adapter's
    would be lost to :mod:`roost.headless.holder.adapter`'s ``Popen.wait``, which would then
    read a crash as exit 0."""
    import psutil

    for proc in descendants():
        if proc.pid in skip:
            continue
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                os.waitpid(proc.pid, os.WNOHANG)
        except (psutil.Error, ChildProcessError):
            pass


async def keep_reaping(skip: frozenset[int], every: float = REAP_EVERY) -> None:
    """:func:`reap` every ``every`` seconds, until cancelled: an orphan that exits mid-session
    is not left a zombie until the holder ends. asyncio is imported here: the holder loads this
    module to become a subreaper before its loop (:mod:`roost.headless.holder.spawn`)."""
    import asyncio

    while True:
        await asyncio.sleep(every)
        reap(skip)


def _signal(proc: psutil.Process, sig: int) -> None:
    import psutil

    with contextlib.suppress(psutil.Error):
        proc.send_signal(sig)
