"""Server-sent events from a peer, read with a bound: a peer is hostile until checked.

A peer's roster stream is SSE like the local ``/changes``, and is read by the one parser
(:mod:`roost.base.sse`) with a limit: an event or a line past ``limit`` bytes ends the stream
(:class:`~roost.base.sse.TooLarge`), since a line that never ends is a flood, not a frame.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from roost.base import sse

KEEPALIVE = "keepalive"
"""What :func:`read` yields for a comment: the peer said something, and nothing else."""


async def read(chunks: AsyncIterator[bytes], limit: int) -> AsyncIterator[tuple[str, str]]:
    """``(event, data)`` for each complete event, ``(KEEPALIVE, "")`` for each comment."""
    parser, buffer = sse.Parser(limit), bytearray()
    async for chunk in chunks:
        buffer += chunk
        for event in parser.chunk(buffer):
            if event is sse.COMMENT:
                yield KEEPALIVE, ""
            else:
                yield event.event, event.data.decode("utf-8", "replace")
