"""Who is at the other end of a socket, in the kernel's word: never a value the peer sent.

The reports socket and the API's unix socket both name their caller this way (``SO_PEERCRED``),
and a face that must know which process calls (the MCP server's caller, a report's sender)
trusts nothing else. Over TCP on loopback the kernel's tables name it too (:func:`tcp_peer`):
what an HTTP hook posted from an agent is attested by.
"""

from __future__ import annotations

import os
import socket
import struct
import sys
from collections.abc import Iterable
from typing import Any

from roost.base import procfs
from roost.truth.detect import procs
from roost.truth.roster import ProcessId


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
    peer's socket is the one whose local address is this connection's remote one and whose
    remote address is this one's local one; the kernel gives its owner's uid and its inode
    (:func:`_diagnosed`), and the process is the one holding ``socket:[inode]`` among its
    open files.
    ``among`` narrows the search to some pids (a pane's process tree, say); by default every
    process is looked at. A socket held by several processes (inherited across a fork) names
    none of them, since no one of them can be said to have sent the request.
    """
    if not (_loopback(remote) and _ipv4(local)):
        return "the connection is not TCP on loopback"
    try:
        row = _diagnosed(remote, local)  # type: ignore[arg-type]
    except struct.error:
        return "the connection is not TCP on loopback"
    except OSError:  # a kernel without sock_diag: its table, slower
        try:
            row = _tcp_row(_wire(remote), _wire(local))
        except OSError:
            return "the connection is not TCP on loopback"
    if row is None:
        return "the kernel holds no socket for the connection's other end"
    uid, inode = row
    if uid != os.getuid():
        return f"the poster runs as uid {uid}, not as this daemon's user"
    holders = _holding(f"socket:[{inode}]", procfs.pids() if among is None else among)
    if len(holders) != 1:
        return NOT_HELD if not holders else "several processes hold the connection"
    process = procs.identity(holders[0])
    return process if process is not None else "the posting process is gone"


NETLINK_SOCK_DIAG = 4
NOT_HELD = "no process visible to this daemon holds the connection"
"""Why :func:`tcp_peer` names nobody when no process it looked at holds the other end: a
caller that looked among a few processes first may look among more."""


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


SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST = 1
_HEADER = struct.Struct("=IHHII")
"""A netlink message's header: length, type, flags, sequence, port."""
_REQUEST = struct.Struct("=BBBxI")
"""``inet_diag_req_v2`` before its socket's id: family, protocol, extensions, states."""
_PORTS = struct.Struct("!HH")
"""The id's source and destination ports, in network order (the rest of it is the host's)."""
_ANSWER = struct.Struct("=16x BBBB 48x III II")
"""An ``inet_diag_msg`` after its netlink header, up to its owner's uid and inode."""


def _diagnosed(source: tuple[str, int], destination: tuple[str, int]) -> tuple[int, int] | None:
    """(uid, inode) of the TCP socket from ``source`` to ``destination``, asked of the kernel
    by its four ends (NETLINK_SOCK_DIAG, as ``ss`` asks): one lookup in its tables, some
    microseconds, where reading ``/proc/net/tcp`` makes the kernel print every socket (a
    millisecond and more, on every HTTP hook). None when no such socket exists."""
    body = b"".join(
        (
            _REQUEST.pack(socket.AF_INET, socket.IPPROTO_TCP, 0, 0xFFFFFFFF),  # any state
            _PORTS.pack(source[1], destination[1]),
            socket.inet_pton(socket.AF_INET, source[0]).ljust(16, b"\0"),
            socket.inet_pton(socket.AF_INET, destination[0]).ljust(16, b"\0"),
            struct.pack("=I", 0),  # any interface
            b"\xff" * 8,  # no cookie: found by its ends
        )
    )
    request = _HEADER.pack(_HEADER.size + len(body), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST, 1, 0) + body
    with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG) as channel:
        channel.settimeout(1.0)
        channel.send(request)
        answer = channel.recv(8192)
    if len(answer) < _ANSWER.size or struct.unpack_from("=H", answer, 4)[0] != SOCK_DIAG_BY_FAMILY:
        return None  # NLMSG_ERROR: no such socket
    fields = _ANSWER.unpack_from(answer)
    return fields[-2], fields[-1]


def _tcp_row(local: str, remote: str) -> tuple[int, int] | None:
    """(uid, inode) of the socket from ``local`` to ``remote`` in ``/proc/net/tcp``, or None."""
    try:
        with open("/proc/net/tcp", "rb") as table:
            data = table.read()
    except OSError:
        return None
    at = data.find(f" {local} {remote} ".encode())
    if at < 0:
        return None
    fields = data[data.rfind(b"\n", 0, at) + 1 : data.find(b"\n", at)].split()
    try:
        return int(fields[7]), int(fields[9])
    except (IndexError, ValueError):
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
