"""Signals from tests that reach only the process they mean.

A pid read a moment ago (from a state file, a tools list, a scan of /proc) may already name
someone else: pids here wrap at 32768, and two workers start processes by the thousand, so a
pid a test remembers for a few seconds can come back as another worker's tmux server. A test
that signals such a pid ends that server under a test it never touched ("server exited
unexpectedly"). So a test signals as rosterd does, through
:func:`roost.truth.detect.procs.signal_if`: a pidfd pins the process, the test checks it is still the
one it means (its command line, environment, parent or start time), and only then sends.
"""

from __future__ import annotations

import signal

from roost.base import procfs
from roost.truth.detect.procs import signal_if

__all__ = ["holds", "send_exactly", "signal_if", "started"]


def holds(pid: int, text: bytes, where: str = "cmdline") -> bool:
    """Whether ``/proc/PID/<where>`` (``cmdline`` or ``environ``) holds ``text``."""
    try:
        with open(f"/proc/{pid}/{where}", "rb") as read:
            return text in read.read()
    except OSError:
        return False


def started(pid: int) -> int | None:
    """The process's start time in clock ticks: with the pid, it names one process."""
    found = procfs.stat(pid)
    return found.start_ticks if found is not None else None


def send_exactly(pid: int, ticks: int | None, signum: int = signal.SIGKILL) -> bool:
    """Send ``signum`` to ``pid`` only while it is the process that started at ``ticks``."""
    return ticks is not None and signal_if(pid, signum, lambda: started(pid) == ticks)
