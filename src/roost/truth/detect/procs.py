"""Processes as the kernel names them, read from /proc (through :mod:`roost.base.procfs`) without psutil.

A pid alone is reused; a pid with its start time (clock ticks since boot, field 22 of
``/proc/PID/stat``) is not, so that pair is how every claim names a process. This module is
import-light on purpose: the API computes identities with it on its hot paths.

A start time counts from the boot, so after a reboot the same pair may name another process.
What Roost may ever signal without having started it itself (a holder or an adapter a daemon
that died left behind) is therefore recorded as a :class:`Stamp` (pid, start time and the
kernel's boot id) and signalled only through :func:`signal_exactly`, which checks all three
against the kernel at the moment of the signal, through a pidfd that cannot be reused.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from roost.base import procfs
from roost.truth.roster.claims import ProcessId

if TYPE_CHECKING:
    from collections.abc import Callable

BOOT_ID = "/proc/sys/kernel/random/boot_id"
"""A random id the kernel makes at each boot: a start time means nothing across two of them."""
_boot: list[str] = []

MAX_DEPTH = 64
"""Ancestors followed at most: deeper trees are not sessions anyone nests on purpose."""


def identity(pid: int) -> ProcessId | None:
    """The live process ``pid`` names now, or None when it is gone or a zombie."""
    stat = procfs.stat(pid)
    return None if stat is None or stat.gone else ProcessId(pid, stat.start_ticks)


def parent(pid: int) -> int:
    """The parent pid, or 0 when the process is gone."""
    stat = procfs.stat(pid)
    return stat.ppid if stat is not None else 0


def alive(process: ProcessId) -> bool:
    """Whether exactly this incarnation still runs (a reused pid is a different process)."""
    return identity(process.pid) == process


def ancestors(pid: int, stop: int | None = None) -> tuple[ProcessId, ...]:
    """The chain of parents, nearest first, up to and including ``stop`` (or up to init)."""
    chain: list[ProcessId] = []
    if pid == stop:
        return ()
    for ancestor, stat in procfs.lineage(parent(pid), MAX_DEPTH):
        chain.append(ProcessId(ancestor, stat.start_ticks))
        if ancestor == stop:
            break
    return tuple(chain)


def boot_id() -> str | None:
    """This boot's id (read once per process: it cannot change while the process runs)."""
    if not _boot:
        try:
            with open(BOOT_ID, encoding="ascii") as file:
                _boot.append(file.read().strip())
        except OSError:
            return None
    return _boot[0] or None


@dataclass(frozen=True)
class Stamp:
    """A process's kernel identity: pid, start time and the boot both belong to."""

    pid: int
    start_ticks: int
    boot_id: str

    def to_json(self) -> dict[str, Any]:
        return {"pid": self.pid, "start_ticks": self.start_ticks, "boot_id": self.boot_id}

    @classmethod
    def from_json(cls, value: object) -> Stamp | None:
        """A stamp read back from a file: None unless every field has its exact type and range,
        since a file is input like any other and must never be trusted to name a process."""
        if not isinstance(value, dict) or set(value) != {"pid", "start_ticks", "boot_id"}:
            return None
        pid, ticks, boot = value["pid"], value["start_ticks"], value["boot_id"]
        if type(pid) is not int or type(ticks) is not int or not isinstance(boot, str):
            return None
        if not 1 < pid < 2**22 or ticks <= 0 or not 0 < len(boot) <= 64:
            return None
        return cls(pid, ticks, boot)

    @property
    def process(self) -> ProcessId:
        return ProcessId(self.pid, self.start_ticks)


def stamp(process: ProcessId | int) -> Stamp | None:
    """The stamp of a live process (given by pid, or by identity it must still match)."""
    found = identity(process if isinstance(process, int) else process.pid)
    boot = boot_id()
    if found is None or boot is None or (isinstance(process, ProcessId) and found != process):
        return None
    return Stamp(found.pid, found.start_ticks, boot)


def signal_exactly(target: Stamp, signum: int = signal.SIGKILL, *, group: bool = False) -> bool:
    """Send ``signum`` to exactly the process ``target`` names (with ``group``, to the process
    group it leads), and only while it is that process: same boot, same pid, same start time.
    Whether it was sent."""
    if target.boot_id != boot_id():
        return False
    return signal_if(target.pid, signum, lambda: identity(target.pid) == target.process, group=group)


def signal_if(pid: int, signum: int, still: Callable[[], bool], *, group: bool = False) -> bool:
    """Send ``signum`` to ``pid`` (with ``group``, to the process group it leads) only if
    ``still()`` holds once the pid is pinned; whether it was sent. The pidfd is opened first and
    ``still`` asked after, so a pid reused between the check and the signal cannot be hit."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return False
    try:
        if not still():
            return False
        if group:
            if os.getpgid(pid) != pid:
                return False
            os.killpg(pid, signum)
        else:
            signal.pidfd_send_signal(pidfd, signum)
        return True
    except OSError:
        return False
    finally:
        os.close(pidfd)


def carries(pid: int, name: str, value: str) -> bool:
    """Whether process ``pid`` was started with ``name=value`` in its environment: a mark a
    process carries itself, which no file about it can forge."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as file:
            entries = file.read().split(b"\0")
    except OSError:
        return False
    return f"{name}={value}".encode() in entries
