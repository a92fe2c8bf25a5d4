"""Identity before any signal: which of a headless session's processes the runner may end.

For each holder and adapter the runner records a stamp (pid, start time in clock ticks, and
the boot id): the holder's from the process that answers on its socket (``SO_PEERCRED``), the
adapter's from the holder's own answer, kept only while the holder is its parent. A process is
signalled only through a pidfd and only while all three still match
(:func:`roost.truth.detect.procs.signal_exactly`), so after a reboot, or once a pid names another
process, nothing a file names is touched. Every signal the runner sends is sent from here.
"""

from __future__ import annotations

import signal

import psutil

from roost.base import paths
from roost.headless.runner.link import Handshake
from roost.headless.runner.store import Entry
from roost.truth.detect import procs
from roost.truth.roster import ProcessId


def stamp(entry: Entry, holder: ProcessId | None, shaken: Handshake) -> None:
    """Record the kernel identities of the holder and of its adapter. The adapter's pid comes
    from the holder's own answer, and counts only while the holder is that process's parent."""
    entry.holder_process = entry.adapter_process = None
    found = procs.stamp(holder) if holder is not None else None
    if holder is None or found is None:
        return
    entry.holder_process = found.to_json()
    state = shaken.replay.get("state")
    pid = state.get("adapter_pid") if isinstance(state, dict) else None
    if type(pid) is int and pid > 1 and procs.parent(pid) == holder.pid:
        adapter = procs.stamp(pid)
        entry.adapter_process = adapter.to_json() if adapter else None


def key_process(key: str) -> ProcessId:
    """The process a session key was made from: ``node:pid:ticks``."""
    _, pid, ticks = key.rsplit(":", 2)
    return ProcessId(int(pid), int(ticks))


def kill_holder(holder: ProcessId) -> None:
    """End a holder that did not stop when asked, and its process group, if it is still the
    process the runner started."""
    target = procs.stamp(holder)
    if target is not None:
        procs.signal_exactly(target, signal.SIGKILL, group=True)


def end_leftovers(entry: Entry) -> None:
    """A holder that died without ending its tree leaves its adapter: end it and its children.

    Only the adapter the runner recorded (its pid, start time and boot all still the same) and
    only while it carries its holder's mark in its environment: after a reboot, or when the
    pid names anything else, nothing is signalled."""
    adapter = procs.Stamp.from_json(entry.adapter_process)
    if adapter is None or not entry.holder or not procs.alive(adapter.process):
        return
    if not procs.carries(adapter.pid, paths.HOLDER_MARK_ENV, entry.holder):
        return
    try:
        below = psutil.Process(adapter.pid).children(recursive=True)
    except psutil.Error:
        below = []
    tree = [adapter, *(found for proc in below if (found := procs.stamp(proc.pid)) is not None)]
    if procs.stamp(adapter.process) != adapter:  # it ended while its children were listed
        return
    for target in tree:
        procs.signal_exactly(target, signal.SIGKILL)
