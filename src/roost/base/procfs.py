"""Processes as ``/proc`` shows them: one reader for every module that asks the kernel.

The hook reads its own start and its ancestors on every event, the pane's badge reads which
job holds a terminal, and the daemon's scan reads every process on every pass, so this is
plain ``os`` calls on an unbuffered descriptor and a class with slots: no ``dataclasses`` or
``typing`` to import, no file object to build per process.

``/proc/PID/stat`` is one line: the pid, the command name in parentheses (which may itself
hold spaces and parentheses), then the other fields, so they are read after the *last* ``)``.
"""

from __future__ import annotations

import os

PID_MAX = 1 << 22
"""Linux's ``PID_MAX_LIMIT``: no kernel numbers a process higher, whatever ``pid_max`` says."""

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket
    from collections.abc import Iterator

_STAT_BYTES = 4096
"""More than a stat line can be: 52 numbers and a name of at most 16 bytes."""


class Stat:
    """The fields of one ``/proc/PID/stat`` line that Roost reads, as the kernel wrote them.

    ``name`` is the kernel's command name (``comm``, cut at 15 bytes) undecoded, since the
    scan keys its caches on it; ``state`` is the one-letter state (``b"Z"`` a zombie, ``b"X"``
    dead); ``start_ticks`` is the start time in clock ticks since boot, which with the pid
    names one process (a pid alone is reused).
    """

    __slots__ = ("name", "pgrp", "ppid", "start_ticks", "state", "tpgid")

    def __init__(self, name: bytes, state: bytes, ppid: int, pgrp: int, tpgid: int, start_ticks: int) -> None:
        self.name = name
        self.state = state
        self.ppid = ppid
        self.pgrp = pgrp
        self.tpgid = tpgid
        self.start_ticks = start_ticks

    @property
    def gone(self) -> bool:
        """Whether the process has ended and only its entry is left: a zombie, or dead (which
        the kernel documents as never seen, and which is counted the same way to be sure)."""
        return self.state in (b"Z", b"X")


def pids() -> list[int]:
    """Every process's pid now; raises ``OSError`` where ``/proc`` cannot be listed, which
    each caller reads in its own way (a job may still run; a scan has nothing to go on)."""
    return [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]


def stat(pid: int | str) -> Stat | None:
    """``/proc/PID/stat`` (``pid`` may be ``"self"``), or None when there is no such process."""
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        raw = os.read(fd, _STAT_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    close = raw.rfind(b")")
    # state, ppid, pgrp, session, tty_nr, tpgid, … and start time as the twentieth
    fields = raw[close + 2 :].split(maxsplit=20)
    if close < 0 or len(fields) < 20:
        return None
    try:
        ppid, pgrp, tpgid, ticks = int(fields[1]), int(fields[2]), int(fields[5]), int(fields[19])
    except ValueError:
        return None
    return Stat(raw[raw.find(b"(") + 1 : close], fields[0], ppid, pgrp, tpgid, ticks)


MAX_HOPS = 64
"""How far up the process tree a walk goes: deeper than any real chain of shells and agents,
and a bound on a walk that a pid reused mid-walk could otherwise send in circles."""


def lineage(pid: int, hops: int = MAX_HOPS) -> Iterator[tuple[int, Stat]]:
    """``pid`` and then each of its ancestors, nearest first, with its stat: the one walk up the
    process tree (the hook's agent and its ancestors, a shared process among them, a claim's
    ancestry). It stops at init, at a process gone or a zombie, or after ``hops``."""
    for _ in range(hops):
        if pid <= 1:
            return
        found = stat(pid)
        if found is None or found.gone:
            return
        yield pid, found
        pid = found.ppid


def cmdline(pid: int) -> list[str]:
    """A process's arguments (an empty list when it is gone or a kernel thread)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            return [part.decode(errors="replace") for part in file.read().split(b"\0") if part]
    except OSError:
        return []


def children() -> list[int]:
    """The pids of this process's children, from every thread of it."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return []
    pids: list[int] = []
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children") as found:
                pids += [int(pid) for pid in found.read().split()]
        except (OSError, ValueError):
            continue
    return pids


def peer(sock: socket.socket) -> tuple[int, int]:
    """The pid and uid of the process at the other end of a unix socket, as the kernel saw it
    when the connection was made (for a client: the process that made the listening socket).
    Imported here: the hook reads this module on every event and never a socket's peer."""
    import socket
    import struct

    cred = struct.Struct("3i")
    pid, uid, _gid = cred.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, cred.size))
    return pid, uid


def flock_owner(path: str) -> int | None:
    """The pid holding an exclusive ``flock`` on ``path``, as the kernel's lock table says, or
    None when nobody does. Unlike a pid written into the file, this cannot be forged."""
    try:
        st = os.stat(path)
        with open("/proc/locks", encoding="ascii", errors="replace") as file:
            table = file.read()
    except OSError:
        return None
    device = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in table.splitlines():
        fields = line.split()
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[3] == "WRITE" and fields[5] == device:
            return int(fields[4]) if fields[4].isdigit() else None
    return None
