"""The daemon's listening sockets and its single-instance lock.

Exactly two listeners: the API's unix socket (mode 0600, created under a private umask so it
is never briefly open to others) and TCP on 127.0.0.1 at ``[node] loopback_port``. The host is
not configurable: the loopback listener cannot be pointed at another interface by mistake.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import stat
from pathlib import Path
from typing import IO

from roost import paths
from roost.errors import Conflict, SetupError

LOOPBACK = "127.0.0.1"


class AlreadyRunning(Conflict):
    """Another rosterd holds the lock for this runtime directory."""


def lock() -> IO[str]:
    """Take the daemon lock, or say which daemon holds it. The kernel drops it when this process
    dies however it dies, so a ``kill -9`` never leaves a lock behind."""
    path = paths.daemon_lock()
    handle = open(path, "a+")  # noqa: SIM115 - held for the daemon's lifetime
    os.chmod(path, 0o600)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "?"
        handle.close()
        raise AlreadyRunning(f"rosterd is already running (pid {holder}, lock {path})") from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return handle


def unix(path: Path) -> socket.socket:
    """Bind the API socket. Called with the lock held, so a socket already there is a dead
    daemon's and is replaced; anything else at that path is left alone and refused."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISSOCK(path.lstat().st_mode):
            raise SetupError(f"cannot listen on {path}: something that is not a socket is there")
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    previous = os.umask(0o177)
    try:
        sock.bind(str(path))
    except OSError as error:
        sock.close()
        raise SetupError(f"cannot listen on {path}: {error.strerror}") from None
    finally:
        os.umask(previous)
    os.chmod(path, 0o600)
    return sock


def loopback(port: int) -> socket.socket:
    """Bind 127.0.0.1:``port``, and nothing else. The socket names IPPROTO_TCP: asyncio turns
    Nagle off only on a socket that says it is TCP, and with Nagle on every answer waited
    ~40 ms for a delayed ACK between its headers and its body (measured)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((LOOPBACK, port))
    except OSError as error:
        sock.close()
        raise SetupError(f"cannot listen on {LOOPBACK}:{port}: {error.strerror}") from None
    return sock
