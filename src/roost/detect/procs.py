"""Processes as the kernel names them, read from /proc without psutil.

A pid alone is reused; a pid with its start time (clock ticks since boot, field 22 of
``/proc/PID/stat``) is not, so that pair is how every claim names a process. This module is
import-light on purpose: the hook and the API compute identities with it on their hot paths.
"""

from __future__ import annotations

import os

from roost.roster.claims import ProcessId

MAX_DEPTH = 64
"""Ancestors followed at most: deeper trees are not sessions anyone nests on purpose."""


def raw_stat(pid: int) -> bytes | None:
    """``/proc/PID/stat`` as bytes, or None when the process is gone. Plain ``os`` calls, no
    buffered file object: the daemon's scan reads this for every process on every pass."""
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)


def _stat(pid: int) -> list[bytes] | None:
    """The first 20 fields of ``/proc/PID/stat`` after the command name (state first, start time
    last), or None when gone; all ASCII, so left undecoded."""
    raw = raw_stat(pid)
    if raw is None:
        return None
    # The command name may hold spaces and parentheses; the fields resume after the last ')'.
    return raw[raw.rfind(b")") + 2 :].split(maxsplit=20)[:20]


def identity(pid: int) -> ProcessId | None:
    """The live process ``pid`` names now, or None when it is gone or a zombie."""
    fields = _stat(pid)
    if not fields or len(fields) < 20 or fields[0] in (b"Z", b"X"):
        return None
    return ProcessId(pid, int(fields[19]))


def parent(pid: int) -> int:
    """The parent pid, or 0 when the process is gone."""
    fields = _stat(pid)
    return int(fields[1]) if fields and len(fields) > 1 else 0


def alive(process: ProcessId) -> bool:
    """Whether exactly this incarnation still runs (a reused pid is a different process)."""
    return identity(process.pid) == process


def ancestors(pid: int, stop: int | None = None) -> tuple[ProcessId, ...]:
    """The chain of parents, nearest first, up to and including ``stop`` (or up to init)."""
    chain: list[ProcessId] = []
    current = pid
    for _ in range(MAX_DEPTH):
        if current == stop:
            break
        current = parent(current)
        if current <= 1:
            break
        found = identity(current)
        if found is None:
            break
        chain.append(found)
    return tuple(chain)
