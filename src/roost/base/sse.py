"""Server-sent events (``text/event-stream``), written and read in one place.

The daemon's streams (``/changes``, ``/events``, ``/swarm/changes``, ``/swarm/events``) are
written here, a node's roster stream to its peers too, and every reader (``rosterd watch``
over the unix socket, a node following a peer) parses them here. What roost writes is a small
part of the format: an optional ``id:``, an ``event:`` and one ``data:`` line of JSON per
event, and a ``: keepalive`` comment on a quiet stream. What it reads is the format as a
client must take it: any field order, several ``data:`` lines joined by newlines, a field's
one optional space, ``\\r\\n`` line ends, comments. A reader that follows a stream from
outside (a peer is hostile until checked) gives a ``limit``: an event or a line larger than
that ends the stream (:class:`TooLarge`) instead of growing without end.

Stdlib only and no ``dataclasses``: ``rosterd``'s verbs import this on every start.
"""

from __future__ import annotations

KEEPALIVE = ": keepalive\n\n"
"""A comment: the stream is alive, nothing changed."""


class TooLarge(ValueError):
    """An event, or a line, past the reader's limit."""


class Event:
    """One event as read: its name (``message`` when it gave none), its id (``""`` when it gave
    none) and its data, the ``data:`` lines joined by newlines, undecoded."""

    __slots__ = ("data", "event", "id")

    def __init__(self, event: str, ident: str, data: bytes) -> None:
        self.event, self.id, self.data = event, ident, data

    def json(self) -> object:
        from roost.base import cjson

        return cjson.loads(self.data)


COMMENT = Event("", "", b"")
"""What :meth:`Parser.line` returns for a comment (a keep-alive): the peer said something."""


def encode(event: str, data: str, ident: str | None = None) -> str:
    """One event as written; ``data`` is one line (``json.dumps`` writes no newline), and an
    ``ident`` of None leaves the reader's last event id as it was."""
    head = "" if ident is None else f"id: {ident}\n"
    return f"{head}event: {event}\ndata: {data}\n\n"


class Parser:
    """Lines in (each without its line end), events out: :meth:`line` returns an
    :class:`Event` at the blank line that ends one, :data:`COMMENT` for a comment, and None
    otherwise."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self._event, self._id = "message", ""
        self._data: list[bytes] = []
        self._size = 0

    def line(self, line: bytes) -> Event | None:
        line = line.rstrip(b"\r")
        if not line:
            return self._dispatch()
        if line.startswith(b":"):
            return COMMENT
        name, _, value = line.partition(b":")
        value = value.removeprefix(b" ")
        if name == b"data":
            self._data.append(value)
            self._size += len(value) + 1
            if self.limit is not None and self._size > self.limit:
                raise TooLarge(f"an event larger than {self.limit} bytes")
        elif name == b"event":
            self._event = value.decode("ascii", "replace")
        elif name == b"id":
            self._id = value.decode("ascii", "replace")
        return None

    def chunk(self, buffer: bytearray) -> list[Event]:
        """The events the complete lines at the start of ``buffer`` finish, those lines taken
        out of it; TooLarge when what is left is a line past the limit."""
        found = []
        while (end := buffer.find(b"\n")) >= 0:
            line = bytes(buffer[:end])
            del buffer[: end + 1]
            if (event := self.line(line)) is not None:
                found.append(event)
        if self.limit is not None and len(buffer) > self.limit:
            raise TooLarge(f"a line longer than {self.limit} bytes")
        return found

    def _dispatch(self) -> Event | None:
        """The event a blank line ends; its fields end with it (an id is the event's own)."""
        data, event, ident = self._data, self._event, self._id
        self._event, self._id, self._data, self._size = "message", "", [], 0
        if not data:
            return None
        return Event(event, ident, b"\n".join(data))
