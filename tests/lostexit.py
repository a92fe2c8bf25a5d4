"""A tmux server that never hears its children end, as tmux before 3.6 now and then does not.

tmux built with libutempter (Debian's, Ubuntu's) calls it as it reads the end of a pane's
terminal, and libutempter sets SIGCHLD to its default, ignored, while its helper runs. A pane's
program closes its terminal before the kernel signals its parent, so its SIGCHLD can land in that
moment and be dropped: tmux never reaps the child, never learns how it ended, and never runs
``pane-died``, until some other SIGCHLD makes it collect every child that has ended. A real race
cannot be won on purpose, so :func:`exits_unheard` drops the signal itself: it traces the server
(``ptrace``) and resumes it without each SIGCHLD it is sent. :func:`unheard` tells that it worked:
the child has ended and the server has not collected it; :func:`settled`, that no other child of
the server is still running to end later and be heard.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
import time
from collections.abc import Iterator

from roost.base import procfs
from tests.signals import holds

_SEIZE, _CONT, _DETACH, _INTERRUPT = 0x4206, 7, 17, 0x4207
_EVENT_STOP = 128
_WALL = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)
_libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
_libc.ptrace.restype = ctypes.c_long


def unheard(child: int, server: int) -> bool:
    """Whether ``child`` of ``server`` has ended with the server not told: a zombie it keeps."""
    found = procfs.stat(child)
    return found is not None and found.gone and found.ppid == server


def settled(server: int, running: set[int]) -> bool:
    """Whether every child of ``server`` but ``running`` has ended: none of the jobs it ran for
    hooks is left to end later and so, with its own SIGCHLD, make the server collect the rest."""
    children: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{server}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{server}/task/{task}/children", "rb") as listing:
                children += (int(child) for child in listing.read().split())
    return all(unheard(child, server) for child in children if child not in running)


def _ptrace(request: int, pid: int, data: int = 0) -> None:
    if _libc.ptrace(request, pid, None, data) == -1:
        errno = ctypes.get_errno()
        raise OSError(errno, f"ptrace({request:#x}, {pid}): {os.strerror(errno)}")


def _trace(
    pid: int, socket: str, errors: list[BaseException], attached: threading.Event, done: threading.Event
) -> None:
    """The tracer: every ptrace request on a tracee must come from the thread that seized it."""
    try:
        _ptrace(_SEIZE, pid)
    except OSError as error:
        errors.append(error)
        attached.set()
        return
    if not holds(pid, socket.encode()):  # the pid was read a moment ago: is it still that server?
        errors.append(AssertionError(f"pid {pid} is no longer the tmux server on {socket}"))
        done.set()
    attached.set()
    try:
        _follow(pid, done)
    except OSError as error:
        errors.append(error)


def _follow(pid: int, done: threading.Event) -> None:
    """Resume the server at each stop, without the signal when it is SIGCHLD, until ``done``."""
    interrupted = False
    while True:
        if done.is_set() and not interrupted:
            _ptrace(_INTERRUPT, pid)
            interrupted = True
        found, status = os.waitpid(pid, os.WNOHANG | _WALL)
        if found == 0:
            time.sleep(0.002)
            continue
        if not os.WIFSTOPPED(status):
            return  # the server ended: nothing is left to let go of
        event, sig = status >> 16, os.WSTOPSIG(status)
        if event == _EVENT_STOP and interrupted:
            _ptrace(_DETACH, pid)
            return
        if event:
            _ptrace(_CONT, pid)
        else:
            _ptrace(_CONT, pid, 0 if sig == signal.SIGCHLD else sig)


@contextlib.contextmanager
def exits_unheard(pid: int, socket: str) -> Iterator[None]:
    """While inside, the tmux server ``pid`` (listening on ``socket``) gets no SIGCHLD."""
    errors: list[BaseException] = []
    attached, done = threading.Event(), threading.Event()
    tracer = threading.Thread(target=_trace, args=(pid, socket, errors, attached, done), daemon=True)
    tracer.start()
    attached.wait()
    try:
        if errors:
            raise AssertionError(f"cannot trace the tmux server: {errors[0]}")
        yield
    finally:
        done.set()
        tracer.join()
    if errors:
        raise AssertionError(f"tracing the tmux server failed: {errors[0]}")
