"""The daemon's listening sockets and its single-instance lock.

The API's two listeners: its unix socket (mode 0600, created under a private umask so it is
never briefly open to others) and TCP on 127.0.0.1 at ``[node] loopback_port``; and the hook
port, TCP on 127.0.0.1 at ``[node] hook_port`` or the socket a service manager passed for it
(:func:`activated`). The host is not configurable: no listener can be pointed at another
interface by mistake.

The unix socket is the one a daemon cannot do without: every CLI verb, hook, integration
report and the MCP bridge reach it there, and the lock already proved no other daemon uses
this runtime directory, so a socket it cannot bind is a fault and the daemon does not start.
The two TCP ports are :data:`OPTIONAL`: another daemon on the machine (another user's, a test's)
or any other program may hold them, and without them the roster, the CLIs, hooks and MCP all
still work, so a port it cannot bind is off, said once at the start and in ``GET /status``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import stat
from pathlib import Path
from typing import IO

from roost.base import paths
from roost.base.errors import Conflict, SetupError

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


BACKLOG = 2048
"""Connections the kernel queues before they are accepted: uvicorn's own default, which it sets
again when it starts serving the socket."""


def loopback(port: int) -> socket.socket:
    """Bind 127.0.0.1:``port`` and listen there, and nothing else. The socket names
    IPPROTO_TCP: asyncio turns Nagle off only on a socket that says it is TCP, and with Nagle on
    every answer waited ~40 ms for a delayed ACK between its headers and its body (measured).

    It listens here, not when the server starts: with ``SO_REUSEADDR`` the bind succeeds on a
    port that an outgoing connection uses as its local end (the ephemeral range), and only
    ``listen`` finds the conflict; found later it was a traceback instead of this refusal."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((LOOPBACK, port))
        sock.listen(BACKLOG)
    except OSError as error:
        sock.close()
        raise SetupError(f"cannot listen on {LOOPBACK}:{port}: {error.strerror}") from None
    return sock


OPTIONAL = {
    "loopback": (
        "no browser or HTTP client reaches this daemon (the CLIs, hooks and MCP use its socket); "
        "give [node] loopback_port a free port in rosterd.toml and restart rosterd"
    ),
    "hooks": (
        "only HTTP hooks post there (command hooks reach the daemon on its socket); "
        "give [node] hook_port a free port in rosterd.toml, or 0 for none, and restart rosterd"
    ),
}
"""The listeners a daemon starts without, by their name in ``GET /status``'s ``listen``: what
their absence costs and how to get them back."""


def optional(name: str, port: int, off: dict[str, str]) -> socket.socket | None:
    """127.0.0.1:``port`` for the optional listener ``name``, or None with why it is off put in
    ``off`` under that name."""
    try:
        return loopback(port)
    except SetupError as error:
        off[name] = error.message
        return None


LISTEN_FDS_START = 3
"""The first descriptor a service manager passes (``sd_listen_fds``'s SD_LISTEN_FDS_START)."""
HOOKS_NAME = "hooks"
"""The name the socket unit gives the hook port (``FileDescriptorName=``)."""


def activated() -> socket.socket | None:
    """The hook port's socket, when a service manager passed one: systemd's socket activation
    (``LISTEN_PID`` is this process, ``LISTEN_FDS`` counts the sockets from descriptor 3, and
    ``LISTEN_FDNAMES`` names them; the one named ``hooks``, or the only one). The variables are
    taken out of the environment so nothing this daemon starts believes them too. A passed
    socket that is not TCP listening on 127.0.0.1 is refused: the daemon binds loopback only,
    whoever made the socket."""
    names = os.environ.pop("LISTEN_FDNAMES", "")
    count = os.environ.pop("LISTEN_FDS", "")
    pid = os.environ.pop("LISTEN_PID", "")
    if not (count.isdigit() and pid.isdigit() and int(pid) == os.getpid() and int(count) > 0):
        return None
    given = names.split(":") if names else []
    fd = LISTEN_FDS_START + (given.index(HOOKS_NAME) if HOOKS_NAME in given else 0)
    if fd >= LISTEN_FDS_START + int(count):
        return None
    try:
        sock = socket.socket(fileno=fd)
    except OSError as error:
        raise SetupError(
            f"descriptor {fd}, passed for the hook port, is no socket: {error.strerror}"
        ) from None
    os.set_inheritable(fd, False)
    address = sock.getsockname()
    if sock.family != socket.AF_INET or sock.type != socket.SOCK_STREAM or not address[0].startswith("127."):
        sock.close()
        raise SetupError(f"the socket passed for the hook port listens on {address!r}, not on 127.0.0.1")
    return sock
