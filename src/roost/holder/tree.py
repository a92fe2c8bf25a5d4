"""Owning a process tree: being its subreaper, and ending all of it in bounded time.

An adapter's tools may run in process groups of their own (Claude's Bash tool does), so
killing the adapter's group leaves them running, and once their parent exits they would be
re-parented to init and lost. As a child subreaper the holder inherits every orphan below it
instead, so its own children, walked recursively, are the whole tree.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal

import psutil

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Ask Linux to re-parent orphaned descendants to this process; whether it agreed."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def descendants() -> list[psutil.Process]:
    """Every live process below this one (orphans included, this being their subreaper)."""
    try:
        return psutil.Process().children(recursive=True)
    except psutil.Error:
        return []


def end_all(grace: float, skip: frozenset[int] = frozenset()) -> list[int]:
    """SIGTERM every descendant but ``skip``, then SIGKILL whatever still lives after ``grace``
    seconds; returns the pids that needed the SIGKILL. Reaps what it ends.

    ``skip`` is for a child whose exit someone else collects (asyncio's child watcher owns the
    adapter's): psutil waits on a child with ``waitpid``, which would steal its status."""
    tree = [proc for proc in descendants() if proc.pid not in skip]
    for proc in tree:
        _signal(proc, signal.SIGTERM)
    _, alive = psutil.wait_procs(tree, timeout=grace)
    # A process that forked while being ended has children the first walk did not see.
    later = [proc for proc in descendants() if proc.pid not in skip]
    alive = list({proc.pid: proc for proc in [*alive, *later]}.values())
    for proc in alive:
        _signal(proc, signal.SIGKILL)
    psutil.wait_procs(alive, timeout=grace)
    reap(skip)
    return [proc.pid for proc in alive]


def reap(skip: frozenset[int] = frozenset()) -> None:
    """Collect every exited child but ``skip`` (re-parented orphans too), so none stays a zombie."""
    for proc in descendants():
        if proc.pid in skip:
            continue
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                os.waitpid(proc.pid, os.WNOHANG)
        except (psutil.Error, ChildProcessError):
            pass


def _signal(proc: psutil.Process, sig: int) -> None:
    with contextlib.suppress(psutil.Error):
        proc.send_signal(sig)
