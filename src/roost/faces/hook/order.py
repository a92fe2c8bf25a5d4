"""One pane's hook events, taken in the order its agent fired them.

An agent waits for each hook to exit before it fires the next, so events never overlap, except
when the watchdog hands a slow one off (:mod:`roost.faces.hook.main`): the agent goes on, and
its next event can run while the copy of the last one is still at work. Left alone, the copy
would then badge the pane and tell the daemon last, and an event the agent fired earlier would
win: a ``UserPromptSubmit`` landing after its own ``PermissionRequest`` reads working over an
open dialog.

So every event on a pane holds the pane's lock file (``flock``, which a forked copy keeps)
while it stamps and posts, and the file keeps the number of the latest event taken: the
microsecond, on the boot clock every process shares, at which its hook started. An event
that finds a later one already taken is late, and changes nothing; the same number goes out
as the claim's ``seq``, so the roster refuses a late claim that reached it some other way.
The lock waits at most as long as the copy holding it lives (its hard deadline), and the
event that waits is handed off like any slow one.
"""

from __future__ import annotations

import os
import time

from roost.base import paths

STARTED = time.clock_gettime_ns(time.CLOCK_BOOTTIME) // 1000
"""This hook's number: when it started, in microseconds since boot (it is imported first
thing). Every hook on the machine reads the same clock, so later events count higher."""
DIRECTORY = "hooks"
WIDTH = 20
"""Digits the lock file keeps a number in: fixed, so a shorter one never leaves a tail."""
FLAGS = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW


def take() -> bool:
    """Wait for the pane's earlier events, then take this one's place; the lock is held until
    the process exits. False when a later event was taken first: this one is late. Outside
    tmux, or where the lock file cannot be had, the event is taken as it comes (the roster
    still orders its claims by ``seq``, :data:`STARTED`)."""
    fd = _lock_file()
    if fd is None:
        return True
    import fcntl  # only where there is a pane to order

    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        kept = os.pread(fd, WIDTH, 0).strip(b"\0 \n")
        if kept.isdigit() and int(kept) > STARTED:
            return False
        os.pwrite(fd, b"%0*d" % (WIDTH, STARTED), 0)
    except OSError:
        pass
    return True


def _lock_file() -> int | None:
    """The open lock file of the pane this hook runs in, named by its tmux server's socket
    (device and inode: the same path can name a later server) and the pane's id."""
    from roost.faces.hook.pane import here  # the event's stamp imports it anyway

    found = here()
    if found is None or not found[0].startswith("%") or not found[0][1:].isdigit():
        return None
    pane, socket = found
    try:
        server = os.stat(socket)
        directory = os.path.join(paths.runtime_path(), DIRECTORY)
        path = os.path.join(directory, f"{server.st_dev}-{server.st_ino}-{pane[1:]}")
        try:
            return os.open(path, FLAGS, 0o600)
        except FileNotFoundError:  # the first event since boot: make the directory once
            paths.private_mkdir(directory)
            return os.open(path, FLAGS, 0o600)
    except OSError:
        return None
