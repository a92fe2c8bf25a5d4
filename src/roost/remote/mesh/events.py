"""Server-sent events from a peer, read with a bound: a peer is hostile until checked.

A peer's roster stream is SSE (``text/event-stream``) like the local ``/changes``, so the two
read alike. This reader takes only what the exchange sends: ``event:`` and ``data:`` lines
and ``:`` comments (keep-alives). An event whose lines add up to more than ``limit`` bytes
ends the stream (:class:`TooLarge`): a line that never ends is a flood, not a frame.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

KEEPALIVE = "keepalive"
"""What :func:`read` yields for a comment: the peer said something, and nothing else."""


class TooLarge(ValueError):
    """An event past the reader's limit."""


def encode(event: str, data: str) -> bytes:
    """One event as sent; ``data`` is one line of JSON (``json.dumps`` writes no newline)."""
    return f"event: {event}\ndata: {data}\n\n".encode()


COMMENT = b": keepalive\n\n"


async def read(chunks: AsyncIterator[bytes], limit: int) -> AsyncIterator[tuple[str, str]]:
    """``(event, data)`` for each complete event, ``(KEEPALIVE, "")`` for each comment."""
    buffer = bytearray()
    event, data = "message", bytearray()
    async for chunk in chunks:
        buffer += chunk
        while (end := buffer.find(b"\n")) >= 0:
            line = bytes(buffer[:end]).rstrip(b"\r")
            del buffer[: end + 1]
            if not line:
                if data:
                    yield event, data.decode("utf-8", "replace")
                event, data = "message", bytearray()
            elif line.startswith(b":"):
                yield KEEPALIVE, ""
            elif line.startswith(b"event:"):
                event = line[6:].strip().decode("ascii", "replace")
            elif line.startswith(b"data:"):
                data += line[5:].lstrip(b" ")
            if len(data) > limit:
                raise TooLarge(f"an event larger than {limit} bytes")
        if len(buffer) > limit:
            raise TooLarge(f"a line longer than {limit} bytes")
