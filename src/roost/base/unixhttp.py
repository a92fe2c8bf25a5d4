"""HTTP/1.1 over a unix socket: the one client the hook, the gate and both CLIs share.

Three kinds of program ask the daemon over its socket: the hook posts a claim on every agent
event and has 250 ms for it, the gate holds ``POST /gate`` open for as long as a person takes
to answer, and ``rosterd``'s verbs and ``roost api`` ask and stream for scripts that call them
in loops. They talk to one server (the daemon's uvicorn) over one socket, so this speaks what
that takes and no more: one request per connection (``Connection: close``), an answer's body
framed by ``Content-Length``, by chunks, or by the close. It is written on ``_socket`` and
imports nothing else: ``http.client`` brings in the ``email`` package (~20 ms) and ``socket``
brings ``selectors`` and ``enum``, either more than the hook spends posting a claim. Bodies
are bytes: each caller encodes and decodes its JSON with what it already holds::

    with Connection(path, timeout=10.0) as connection:
        connection.connect()                # nobody listens: raises, and nothing was sent
        connection.send("POST", "/claim", body, {"Content-Type": "application/json"})
        answer = connection.response()    # raises when no answer came: it may have happened
        answer.status, answer.read()

Every failure is an ``OSError`` (``TimeoutError`` for a wait that ran out), so where it is
raised is what tells "not reached" (``connect``) from "sent, and no answer" (after it): the
difference ``roost api agent-prompt`` needs to never send a prompt twice.
"""

from __future__ import annotations

import time

TYPE_CHECKING = False  # as in roost.base.paths: this is on the hook's path, and typing costs ~2 ms
if TYPE_CHECKING:
    import _socket

HANGUP = "Remote end closed connection without response"
"""What a connection closed before its answer says: ``http.client``'s words, which both CLIs
have printed for it since they shipped."""
LINE_LIMIT = 65_536
"""Bytes a status line, a header or a chunk's size may take; more is not the daemon talking."""
HEADER_LIMIT = 100
"""Headers an answer may have, as ``http.client`` allows."""
_RECV = 65_536


class ProtocolError(ConnectionError):
    """What came back is not an HTTP/1.1 answer, or stopped before its end."""


class Connection:
    """One request and its answer over the unix socket at ``path``; a context manager that
    closes it.

    ``timeout`` bounds each wait on the socket (None waits for ever) and may be changed
    between steps: the gate connects within half a second, then waits days for an answer.
    ``deadline``, a :func:`time.monotonic` time, bounds every step together: the hook's whole
    exchange with the daemon.
    """

    def __init__(self, path: str, timeout: float | None = None, deadline: float | None = None) -> None:
        self.path = path
        self.timeout = timeout
        self.deadline = deadline
        self._sock: _socket.socket | None = None
        self._buffer = b""

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def connect(self) -> None:
        """Reach the socket; raises (``FileNotFoundError``, ``ConnectionRefusedError``, …)
        when nobody listens there."""
        import _socket

        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            sock.settimeout(self._wait())
            sock.connect(self.path)
        except BaseException:
            sock.close()
            raise
        self._sock = sock

    def send(
        self, method: str, target: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> None:
        """Send the request: ``Host`` and ``Connection: close`` are added, and
        ``Content-Length`` when there is a body. A line with a break or a control character in
        it is refused unsent: it would end the head early and begin a request of its own."""
        lines = [f"{method} {target} HTTP/1.1", "Host: rosterd"]
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        if body is not None:
            lines.append(f"Content-Length: {len(body)}")
        lines.append("Connection: close")
        if " " in target or not all(line.isascii() and line.isprintable() for line in lines):
            raise ProtocolError(f"not a request to send: {lines[0][:200]!r}")
        sock = self._socket()
        sock.settimeout(self._wait())
        sock.sendall("\r\n".join([*lines, "", ""]).encode() + (body or b""))

    def response(self) -> Response:
        """The answer's status line and headers; its body is read from the :class:`Response`."""
        status_line = self._line()
        if not status_line:
            raise ProtocolError(HANGUP)
        parts = status_line.split(None, 2)
        code = parts[1] if len(parts) > 1 and parts[0].startswith(b"HTTP/1.") else b""
        if not (code.isdigit() and len(code) == 3):
            raise ProtocolError(f"not an HTTP answer: {status_line[:80]!r}")
        headers: dict[str, str] = {}
        for _ in range(HEADER_LIMIT + 1):
            line = self._line()
            if line in (b"\r\n", b"\n"):
                return Response(self, int(code), headers)
            name, colon, value = line.decode("latin-1").partition(":")
            if not colon or not line.endswith(b"\n"):
                raise ProtocolError(f"not a header: {line[:80]!r}")
            headers[name.strip().lower()] = value.strip()
        raise ProtocolError(f"more than {HEADER_LIMIT} headers")

    def _socket(self) -> _socket.socket:
        if self._sock is None:
            raise ProtocolError("not connected")
        return self._sock

    def _wait(self) -> float | None:
        """How long the next step on the socket may wait: ``timeout``, or less by the deadline."""
        if self.deadline is None:
            return self.timeout
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the exchange's deadline passed")
        return left if self.timeout is None else min(left, self.timeout)

    def _recv(self, most: int) -> bytes:
        """At most ``most`` bytes (what is buffered first); b"" when the daemon closed."""
        if self._buffer:
            data, self._buffer = self._buffer[:most], self._buffer[most:]
            return data
        sock = self._socket()
        sock.settimeout(self._wait())
        return sock.recv(min(most, _RECV))

    def _line(self) -> bytes:
        """One line with its ``\\n``, or what came before the close (b"" when nothing did)."""
        while (end := self._buffer.find(b"\n")) < 0:
            if len(self._buffer) > LINE_LIMIT:
                raise ProtocolError(f"a line of the answer is longer than {LINE_LIMIT} bytes")
            sock = self._socket()
            sock.settimeout(self._wait())
            data = sock.recv(_RECV)
            if not data:
                line, self._buffer = self._buffer, b""
                return line
            self._buffer += data
        line, self._buffer = self._buffer[: end + 1], self._buffer[end + 1 :]
        return line


class Response:
    """An answer whose status and headers (names in lower case) are read; its body is read
    once, whole (:meth:`read`) or line by line (:meth:`readline`, for a stream of events)."""

    def __init__(self, connection: Connection, status: int, headers: dict[str, str]) -> None:
        self.status = status
        self.headers = headers
        self._connection = connection
        self._chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        self._left: int | None = None  # the body's (or its chunk's) bytes still to come; None: to the close
        self._ended = False
        self._pending = b""  # read from the body, not yet returned
        self._at = 0
        if status < 200 or status in (204, 304):
            self._ended = True
        elif self._chunked:
            self._left = 0
        elif "content-length" in headers:
            length = headers["content-length"]
            if not length.isdigit():
                raise ProtocolError(f"not a Content-Length: {length[:40]!r}")
            self._left = int(length)
            self._ended = self._left == 0

    def header(self, name: str) -> str:
        """A header's value, or "" when the answer has none of that name."""
        return self.headers.get(name.lower(), "")

    def read(self, limit: int | None = None) -> bytes:
        """The rest of the body; :class:`ProtocolError` when it is longer than ``limit``."""
        parts, size = [self._pending[self._at :]], len(self._pending) - self._at
        self._pending, self._at = b"", 0
        while piece := self._piece():
            size += len(piece)
            if limit is not None and size > limit:
                raise ProtocolError(f"the answer is longer than {limit} bytes")
            parts.append(piece)
        return b"".join(parts)

    def readline(self) -> bytes:
        """The body's next line with its ``\\n``; at the end what is left, then b""."""
        end = self._pending.find(b"\n", self._at)
        while end < 0:
            piece = self._piece()
            if not piece:
                line, self._pending, self._at = self._pending[self._at :], b"", 0
                return line
            searched = len(self._pending) - self._at
            self._pending, self._at = self._pending[self._at :] + piece, 0
            end = self._pending.find(b"\n", searched)
        line, self._at = self._pending[self._at : end + 1], end + 1
        return line

    def _piece(self) -> bytes:
        """The body's next bytes as they arrive, b"" at its end."""
        if self._ended:
            return b""
        connection = self._connection
        if self._left is None:  # no length: the body ends where the daemon closes
            data = connection._recv(_RECV)
            self._ended = not data
            return data
        if self._chunked and self._left == 0:
            size_line = connection._line()
            size = size_line.split(b";")[0].strip()
            if not size or size.strip(b"0123456789abcdefABCDEF"):
                raise ProtocolError(f"not a chunk's size: {size_line[:40]!r}")
            self._left = int(size, 16)
            if self._left == 0:
                while connection._line() not in (b"\r\n", b"\n", b""):  # trailers, if any
                    pass
                self._ended = True
                return b""
        data = connection._recv(self._left)
        if not data:
            raise ProtocolError("the answer ended before its body did")
        self._left -= len(data)
        if self._left == 0:
            if self._chunked:
                connection._line()  # the line break after the chunk's data
            else:
                self._ended = True
        return data
