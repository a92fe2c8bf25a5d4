"""The daemon as ``roost api`` reaches it: JSON over HTTP on its unix socket, stdlib only.

``roost api`` is a CLI that scripts call in loops, so it starts like one: ``http.client`` on an
``AF_UNIX`` socket, nothing heavier. Two ways of failing are kept apart because a prompt's
caller must know which happened: nobody answered before the request was sent
(:class:`Unreachable`: nothing was written anywhere), or the request went out and its answer
never came back (:class:`Lost`: the daemon may have acted on it).
"""

from __future__ import annotations

import http.client
import json
import socket
from urllib.parse import quote

from roost import paths
from roost.errors import RoostError

TYPE_CHECKING = False  # as in roost.paths: importing typing costs a CLI start ~2 ms
if TYPE_CHECKING:
    from typing import Any

TIMEOUT = 10.0
"""Seconds a read may take: the daemon answers from memory, so only a wedged daemon hits it."""


class Unreachable(RoostError):
    """No daemon answered; the request was never sent."""

    exit_code = 2


class Lost(Unreachable):
    """The request was sent and no answer came back: whatever it asked may have happened."""


def path(collection: str, session: str, action: str = "") -> str:
    """``/COLLECTION/SESSION[/ACTION]`` with the session quoted: ``%3`` travels as ``%253``."""
    return f"/{collection}/{quote(session, safe='')}" + (f"/{action}" if action else "")


class _UnixConnection(http.client.HTTPConnection):
    """``HTTPConnection`` over the daemon's unix socket; the host name is only a label."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("rosterd", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self._path)
        except BaseException:
            sock.close()
            raise
        self.sock = sock


def socket_path() -> str:
    """``$ROSTERD_SOCKET``, else ``rosterd.sock`` in the runtime directory."""
    return paths.api_socket_path()


def call(method: str, target: str, doc: Any = None, timeout: float = TIMEOUT) -> tuple[int, Any]:
    """One request; (status, the JSON answer). A body that is not JSON reads as an error."""
    where = socket_path()
    connection = _UnixConnection(where, timeout)
    try:
        connection.connect()
    except OSError as error:
        raise Unreachable(_why(where, error)) from None
    body = None if doc is None else json.dumps(doc).encode()
    headers = {"Content-Type": "application/json"} if body is not None else {}
    try:
        connection.request(method, target, body=body, headers=headers)
        response = connection.getresponse()
        content = response.read()
    except (OSError, http.client.HTTPException) as error:
        raise Lost(f"rosterd did not answer on {where}: {error or type(error).__name__}") from None
    finally:
        connection.close()
    try:
        return response.status, json.loads(content)
    except ValueError:
        return response.status, {"error": f"rosterd answered {response.status} without JSON"}


def _why(where: str, error: OSError) -> str:
    if isinstance(error, FileNotFoundError):
        return f"rosterd is not running: no socket at {where} (start it with `rosterd daemon`)"
    if isinstance(error, ConnectionRefusedError):
        return f"rosterd is not running: {where} refuses connections (start it with `rosterd daemon`)"
    return f"rosterd is not reachable on {where}: {error}"
