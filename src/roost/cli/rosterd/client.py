"""The daemon's API as the ``rosterd`` verbs reach it: HTTP over its unix socket, stdlib only.

Every verb but ``daemon`` starts here, and a CLI is judged by how fast it answers, so this is
``http.client`` on an ``AF_UNIX`` socket: importing httpx alone takes ~3x as long as this.
Two failures are told apart because scripts branch on them: nobody answers on the socket
(:class:`Unreachable`, exit 2, naming the socket) and the daemon answered with an error
(:class:`Refused`, exit 1, in the daemon's own words)::

    with Client() as client:
        body = client.get("/snapshot")          # the body's bytes, exactly as sent
        for frame in client.stream("/changes"):  # server-sent events, one Frame each
            ...
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from urllib.parse import quote

from roost import paths
from roost.errors import RoostError

TYPE_CHECKING = False  # as in roost.paths: importing typing costs every verb ~2 ms
if TYPE_CHECKING:
    from typing import Any

TIMEOUT = 10.0
"""Seconds a plain request may take: the daemon answers from memory, so this only fires when
it is wedged, and then exit 2 says so instead of hanging a script."""


class Unreachable(RoostError):
    """No daemon answers on the socket (missing, refused, silent, or gone mid-stream)."""

    exit_code = 2


class Refused(RoostError):
    """The daemon answered with an error: an unknown or ambiguous KEY, a bad argument."""

    exit_code = 1

    def __init__(self, status: int, doc: dict[str, Any]) -> None:
        message = str(doc.get("error") or f"the daemon answered {status}")
        candidates = doc.get("candidates")
        if candidates:
            message += "; it could be any of:\n" + "\n".join(f"  {key}" for key in candidates)
        super().__init__(message)
        self.status = status
        self.doc = doc


class Frame:
    """One server-sent event. ``data`` is its data line's bytes as received, for ``--json``.
    (A plain class: importing ``dataclasses`` would cost every verb ~10 ms at start.)"""

    __slots__ = ("data", "event", "id")

    def __init__(self, event: str, ident: str, data: bytes) -> None:
        self.event = event
        self.id = ident
        self.data = data

    def json(self) -> Any:
        return json.loads(self.data)


def path_of(*parts: str) -> str:
    """A request path from its segments, each quoted: a KEY may be a name with spaces or '/'."""
    return "/" + "/".join(quote(part, safe=":") for part in parts)


class _UnixConnection(http.client.HTTPConnection):
    """``HTTPConnection`` whose socket is the daemon's unix socket; the host is only a label."""

    def __init__(self, socket_path: str, timeout: float | None) -> None:
        super().__init__("rosterd", timeout=timeout)
        self._socket_path = socket_path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self._socket_path)
        except BaseException:
            sock.close()
            raise
        self.sock = sock


def default_socket() -> str:
    """Where the daemon listens: ``$ROSTERD_SOCKET``, else ``rosterd.sock`` in the runtime dir."""
    return paths.api_socket_path()


class Client:
    """One connection to the daemon, opened on the first request; use as a context manager."""

    def __init__(self, socket_path: str | None = None, timeout: float = TIMEOUT) -> None:
        self.socket_path = socket_path or default_socket()
        self._connection = _UnixConnection(self.socket_path, timeout)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._connection.close()

    def get(self, path: str) -> bytes:
        """The body of a 2xx answer to ``GET path``; :class:`Refused` for any other status."""
        return self._request("GET", path, None)

    def post(self, path: str, doc: Any) -> bytes:
        """``POST path`` with ``doc`` as its JSON body; the 2xx answer's body."""
        return self._request("POST", path, json.dumps(doc).encode())

    def stream(self, path: str) -> Iterator[Frame]:
        """Every event of the SSE stream at ``path`` until interrupted. The stream ending means
        the daemon went away (it never ends one otherwise): that is :class:`Unreachable`."""
        response = self._send("GET", path, None, {"Accept": "text/event-stream"})
        if response.status >= 300:
            raise Refused(response.status, _error_doc(self._read(response)))
        assert self._connection.sock is not None
        self._connection.sock.settimeout(None)  # a quiet roster is not a dead daemon
        fields: dict[str, str] = {}
        data: list[bytes] = []
        while True:
            try:
                line = response.readline()
            except (OSError, http.client.HTTPException) as error:
                raise self._unreachable(error) from None
            if not line:
                raise Unreachable(f"the daemon closed the stream on {self.socket_path} (it stopped?)")
            line = line.rstrip(b"\r\n")
            if line:
                name, _, value = line.partition(b":")
                value = value.removeprefix(b" ")
                if name == b"data":
                    data.append(value)
                elif name in (b"event", b"id"):
                    fields[name.decode()] = value.decode()
            elif data:
                yield Frame(fields.get("event", "message"), fields.get("id", ""), b"\n".join(data))
                fields, data = {}, []
            else:
                fields = {}

    def _request(self, method: str, path: str, body: bytes | None) -> bytes:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        response = self._send(method, path, body, headers)
        content = self._read(response)
        if response.status >= 300:
            raise Refused(response.status, _error_doc(content))
        return content

    def _send(
        self, method: str, path: str, body: bytes | None, headers: dict[str, str]
    ) -> http.client.HTTPResponse:
        try:
            self._connection.request(method, path, body=body, headers=headers)
            return self._connection.getresponse()
        except (OSError, http.client.HTTPException) as error:
            self.close()
            raise self._unreachable(error) from None

    def _read(self, response: http.client.HTTPResponse) -> bytes:
        try:
            return response.read()
        except (OSError, http.client.HTTPException) as error:
            raise self._unreachable(error) from None

    def _unreachable(self, error: BaseException) -> Unreachable:
        where = self.socket_path
        start = "; start it with `rosterd daemon`"
        if isinstance(error, FileNotFoundError):
            why = f"no socket at {where}{start}"
        elif isinstance(error, ConnectionRefusedError):
            why = f"{where} refuses connections (left behind by a daemon that died){start}"
        elif isinstance(error, PermissionError):
            why = f"{where} is not yours to connect to"
        elif isinstance(error, TimeoutError):
            why = f"nothing answered on {where} within {self._connection.timeout:g}s"
        else:
            why = f"the connection on {where} failed: {error}"
        return Unreachable(f"the daemon is not reachable: {why}")


def _error_doc(content: bytes) -> dict[str, Any]:
    """The daemon's ``{"error": …}`` body, or a stand-in when a body is not that shape."""
    try:
        doc = json.loads(content)
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        return doc
    return {"error": content.decode(errors="replace").strip() or None}
