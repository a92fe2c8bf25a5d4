"""Who is at the other end of a socket, in the kernel's word: never a value the peer sent.

The reports socket and the API's unix socket both name their caller this way, and a face that
must know which process calls (the MCP server's caller, a report's sender) trusts nothing else.
"""

from __future__ import annotations

import os
import socket
import struct
from typing import Any

from roost.detect import procs
from roost.roster import ProcessId

_CRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


def peer_of(sock: Any) -> ProcessId | str:
    """The connected process as the kernel names it, or why it cannot be believed."""
    try:
        pid, uid, _gid = _CRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _CRED.size))
    except (OSError, AttributeError):
        return "the peer's credentials cannot be read"
    if uid != os.getuid():
        return f"the reporter runs as uid {uid}, not as this daemon's user"
    process = procs.identity(pid) if pid > 0 else None
    return process if process is not None else "the reporting process is not visible to this daemon"
