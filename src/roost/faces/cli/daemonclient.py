"""The daemon's API as both CLIs reach it: HTTP over its unix socket, stdlib only.

``rosterd``'s verbs and ``roost api`` are CLIs that scripts call in loops, and a CLI is judged
by how fast it answers, so this rides on :mod:`roost.base.unixhttp`, the small client the hook and
the gate use too: importing ``http.client`` costs a verb ~20 ms, and httpx several times that.
Three failures are told apart because callers branch on them:

- :class:`Unreachable` (exit 2): nobody answered on the socket, and nothing was sent;
- :class:`Lost` (an :class:`Unreachable`): the request went out and no answer came back, so
  whatever it asked may have happened (``roost api agent-prompt`` must never resend it);
- :class:`Refused` (exit 1): the daemon answered with an error, in its own words; exit 3 when
  its ``code`` is ``peer_unreachable`` (the session's owner, another node, did not answer).

Each face keeps its own words for them and its own exit codes for the daemon's statuses
(``rosterd``'s verbs exit 1 on any refusal, ``roost api`` 2 on a 404): those are their
contracts. What they share is the transport, the socket and the three failures::

    with Client() as client:
        body = client.get("/snapshot")          # the body's bytes, exactly as sent
        for frame in client.stream("/changes"):  # server-sent events, one sse.Event each
            ...
"""

from __future__ import annotations

from urllib.parse import quote

from roost.base import cjson, paths, sse
from roost.base.errors import (
    PEER_UNREACHABLE,
    Conflict,
    PeerUnreachable,
    RoostError,
    TargetGone,
    TooLarge,
    TooMany,
    Unauthorized,
    Unavailable,
    UsageError,
)
from roost.base.unixhttp import Connection, Response

TYPE_CHECKING = False  # as in roost.base.paths: importing typing costs every verb ~2 ms
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

TIMEOUT = 10.0
"""Seconds a plain request may take: the daemon answers from memory, so this only fires when
it is wedged, and then exit 2 says so instead of hanging a script."""


class Unreachable(Unavailable):
    """No daemon answers on the socket (missing, refused, silent, or gone mid-stream); the
    request was never sent. ``cause`` is the error the connection met, if any."""

    def __init__(self, socket_path: str, cause: BaseException | None, message: str) -> None:
        super().__init__(message)
        self.socket_path = socket_path
        self.cause = cause


class Lost(Unreachable):
    """The request was sent and no answer came back: whatever it asked may have happened."""


FAILURES = {400: UsageError, 401: Unauthorized, 404: TargetGone, 409: Conflict, 413: TooLarge, 429: TooMany}
"""The daemon's statuses as the failures of the table (a 5xx is :class:`Unavailable`, any other
4xx a :class:`Conflict`): the one mapping back from an answer, for every client of the socket."""


class Refused(Conflict):
    """The daemon answered with an error: an unknown or ambiguous KEY, a bad argument.

    ``status`` is the daemon's own; ``doc`` its JSON object, or None when the body was not one.
    """

    def __init__(self, status: int, content: bytes) -> None:
        doc = _object(content)
        if doc is not None:
            message = str(doc.get("error") or f"the daemon answered {status}")
        else:
            message = content.decode(errors="replace").strip() or f"the daemon answered {status}"
        candidates = (doc or {}).get("candidates")
        if candidates:
            message += "; it could be any of:\n" + "\n".join(f"  {key}" for key in candidates)
        super().__init__(message)
        self.status = status
        self.doc = doc
        code = (doc or {}).get("code")
        self.code = code if isinstance(code, str) else None
        """The refusal's ``code``, when the daemon gave one."""
        if self.code == PEER_UNREACHABLE:
            self.exit_code = PeerUnreachable.exit_code

    def failure(self, message: str | None = None) -> RoostError:
        """This refusal as the failure its status names (:data:`FAILURES`), in the daemon's
        words or ``message``: for a face whose exit codes are the failure table's."""
        said = str(self) if message is None else message
        if self.status >= 500:
            return Unavailable(said)
        return FAILURES.get(self.status, Conflict)(said)


def path_of(*parts: str) -> str:
    """A request path from its segments, each quoted: a KEY may be a name with spaces or '/',
    and a pane id travels quoted (``%3`` as ``%253``)."""
    return "/" + "/".join(quote(part, safe=":") for part in parts)


AGENT = "rosterd-cli"
"""The User-Agent of every request: the daemon's journal says an answer came from the CLI."""


class Client:
    """The daemon's API at ``socket_path``, one connection per request (each closed when its
    answer is read); use as a context manager."""

    def __init__(self, socket_path: str | None = None, timeout: float | None = TIMEOUT) -> None:
        self.socket_path = socket_path or paths.api_socket_path()
        self.timeout = timeout
        self._connection: Connection | None = None

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def get(self, path: str) -> bytes:
        """The body of a 2xx answer to ``GET path``; :class:`Refused` for any other status."""
        return self._request("GET", path, None)

    def post(self, path: str, doc: Any) -> bytes:
        """``POST path`` with ``doc`` as its JSON body; the 2xx answer's body."""
        return self._request("POST", path, cjson.dumps(doc).encode())

    def exchange(
        self, method: str, path: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, str, bytes]:
        """Any answer, whatever its status: (status, content type, body), for a caller that
        speaks a protocol of its own over the socket (``rosterd mcp`` relays MCP)."""
        response = self._send(method, path, body, headers)
        return response.status, response.header("Content-Type"), self._read(response)

    def stream(self, path: str) -> Iterator[sse.Event]:
        """Every event of the SSE stream at ``path`` until interrupted. The stream ending means
        the daemon went away (it never ends one otherwise): that is :class:`Unreachable`."""
        response = self._send("GET", path, None, {"Accept": "text/event-stream"})
        if response.status >= 300:
            raise Refused(response.status, self._read(response))
        assert self._connection is not None
        self._connection.timeout = None  # a quiet roster is not a dead daemon
        parser = sse.Parser()
        while True:
            try:
                line = response.readline()
            except OSError as error:
                raise self._failure(Unreachable, error) from None
            if not line:
                where = self.socket_path
                raise Unreachable(where, None, f"the daemon closed the stream on {where} (it stopped?)")
            event = parser.line(line.rstrip(b"\n"))
            if event is not None and event is not sse.COMMENT:
                yield event

    def _request(self, method: str, path: str, body: bytes | None) -> bytes:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        response = self._send(method, path, body, headers)
        content = self._read(response)
        if response.status >= 300:
            raise Refused(response.status, content)
        return content

    def _send(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Response:
        """Connect and send: a failure to connect is :class:`Unreachable`, one after the
        request may have gone out is :class:`Lost`."""
        self.close()  # the last answer was read whole: its connection has nothing more to say
        self._connection = Connection(self.socket_path, self.timeout)
        try:
            self._connection.connect()
        except OSError as error:
            self.close()
            raise self._failure(Unreachable, error) from None
        try:
            self._connection.send(method, path, body, {"User-Agent": AGENT, **headers})
            return self._connection.response()
        except OSError as error:
            self.close()
            raise self._failure(Lost, error) from None

    def _read(self, response: Response) -> bytes:
        try:
            return response.read()
        except OSError as error:
            raise self._failure(Lost, error) from None

    def _failure(self, kind: type[Unreachable], error: BaseException) -> Unreachable:
        where = self.socket_path
        start = "; start it with `rosterd daemon`"
        if isinstance(error, FileNotFoundError):
            why = f"no socket at {where}{start}"
        elif isinstance(error, ConnectionRefusedError):
            why = f"{where} refuses connections (left behind by a daemon that died){start}"
        elif isinstance(error, PermissionError):
            why = f"{where} is not yours to connect to"
        elif isinstance(error, TimeoutError):
            why = f"nothing answered on {where} within {self.timeout:g}s"
        else:
            why = f"the connection on {where} failed: {error}"
        return kind(where, error, f"the daemon is not reachable: {why}")


def _object(content: bytes) -> dict[str, Any] | None:
    """The daemon's ``{"error": …}`` body as a dict, or None when the body is not one."""
    try:
        doc = cjson.loads(content)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None
