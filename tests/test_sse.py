"""The one SSE writer and parser: what roost writes reads back, and what a client must take
(any field order, several data lines, CRLF, comments) reads as the format says."""

from __future__ import annotations

import pytest

from roost.base import sse


def events(text: bytes, limit: int | None = None) -> list[tuple[str, str, bytes]]:
    parser, buffer = sse.Parser(limit), bytearray(text)
    return [
        ("comment", "", b"") if e is sse.COMMENT else (e.event, e.id, e.data) for e in parser.chunk(buffer)
    ]


def test_what_is_written_reads_back() -> None:
    written = sse.encode("change", '{"a":1}', "7:3") + sse.KEEPALIVE + sse.encode("terminals", "{}")
    assert events(written.encode()) == [
        ("change", "7:3", b'{"a":1}'),
        ("comment", "", b""),
        ("terminals", "", b"{}"),  # an id is the event's own
    ]


def test_the_format_as_a_client_must_take_it() -> None:
    text = b"data: one\r\ndata:two\r\nevent: x\r\n\r\n\n\nid: 9\ndata: {}\n\n"
    assert events(text) == [("x", "", b"one\ntwo"), ("message", "9", b"{}")]


def test_a_partial_event_waits_for_its_blank_line() -> None:
    parser, buffer = sse.Parser(), bytearray(b"event: a\ndata: 1")
    assert parser.chunk(buffer) == [] and buffer == bytearray(b"data: 1")
    buffer += b"\n\n"
    [found] = parser.chunk(buffer)
    assert (found.event, found.data, found.json()) == ("a", b"1", 1)


def test_a_reader_with_a_limit_refuses_an_event_or_a_line_past_it() -> None:
    with pytest.raises(sse.TooLarge, match="event larger than 8"):
        events(b"data: 12345\ndata: 12345\n\n", limit=8)
    with pytest.raises(sse.TooLarge, match="line longer than 8"):
        events(b"data: 1234567890", limit=8)
    assert events(b"data: 1234\n\n", limit=8) == [("message", "", b"1234")]
