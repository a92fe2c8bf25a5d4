"""Who is at the other end of a socket, in the kernel's word: never a value the peer sent.

The reports socket and the API's unix socket both name their caller this way (``SO_PEERCRED``),
and a face that must know which process calls (the MCP server's caller, a report's sender)
trusts nothing else. Over TCP on loopback the kernel's tables name it too (:func:`tcp_peer`):
what an HTTP hook posted from an agent is attested by.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterable
from typing import Any

from roost import procfs
from roost.detect import procs
from roost.roster import ProcessId


def peer_of(sock: Any) -> ProcessId | str:
    """The connected process as the kernel names it, or why it cannot be believed."""
    try:
        pid, uid = procfs.peer(sock)
    except (OSError, AttributeError):
        return "the peer's credentials cannot be read"
    if uid != os.getuid():
        return f"the reporter runs as uid {uid}, not as this daemon's user"
    process = procs.identity(pid) if pid > 0 else None
    return process if process is not None else "the reporting process is not visible to this daemon"


def tcp_peer(local: object, remote: object, among: Iterable[int] | None = None) -> ProcessId | str:
    """The process at the other end of a TCP connection on loopback from ``remote`` to ``local``
    (each ``(host, port)``, as an accepted socket or an ASGI scope gives them), as the kernel
    names it, or why it cannot be believed.

    TCP carries no credentials, but on loopback both ends are sockets of this machine: the
    peer's socket is the row of ``/proc/net/tcp`` whose local address is this connection's
    remote one and whose remote address is this one's local one; the row gives its owner's uid
    and its inode, and the process is the one holding ``socket:[inode]`` among its open files.
    ``among`` narrows the search to some pids (a pane's process tree, say); by default every
    process is looked at. A socket held by several processes (inherited across a fork) names
    none of them, since no one of them can be said to have sent the request.
    """
    try:
        ends = (_wire(remote), _wire(local)) if _loopback(remote) and _ipv4(local) else None
    except OSError:
        ends = None
    if ends is None:
        return "the connection is not TCP on loopback"
    row = _tcp_row(*ends)
    if row is None:
        return "the kernel holds no socket for the connection's other end"
    uid, inode = row
    if uid != os.getuid():
        return f"the poster runs as uid {uid}, not as this daemon's user"
    holders = _holding(f"socket:[{inode}]", procfs.pids() if among is None else among)
    if len(holders) != 1:
        return (
            "no process visible to this daemon holds the connection"
            if not holders
            else "several processes hold the connection"
        )
    process = procs.identity(holders[0])
    return process if process is not None else "the posting process is gone"


def _ipv4(address: object) -> bool:
    """``(host, port)`` with a dotted IPv4 host: what an AF_INET socket's address is."""
    return (
        isinstance(address, (tuple, list))
        and len(address) == 2
        and isinstance(address[0], str)
        and type(address[1]) is int
        and address[0].count(".") == 3
    )


def _loopback(address: object) -> bool:
    return _ipv4(address) and address[0].startswith("127.")  # type: ignore[index]


def _wire(address: object) -> str:
    """An IPv4 address as ``/proc/net/tcp`` writes it: the address's bytes in host order, in
    hex, a colon, the port in hex."""
    host, port = address  # type: ignore[misc]
    packed = socket.inet_pton(socket.AF_INET, host)
    return f"{int.from_bytes(packed, sys.byteorder):08X}:{port:04X}"


def _tcp_row(local: str, remote: str) -> tuple[int, int] | None:
    """(uid, inode) of the socket from ``local`` to ``remote``, or None."""
    try:
        with open("/proc/net/tcp", encoding="ascii") as table:
            next(table, None)
            for line in table:
                fields = line.split()
                if len(fields) > 9 and fields[1] == local and fields[2] == remote:
                    return int(fields[7]), int(fields[9])
    except (OSError, ValueError):
        return None
    return None


def _holding(link: str, pids: Iterable[int]) -> list[int]:
    """The pids among ``pids`` with an open file that is ``link`` (``socket:[N]``)."""
    found = []
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == link:
                    found.append(pid)
                    break
            except OSError:
                continue
    return found
