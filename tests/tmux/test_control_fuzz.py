"""The control-mode parser fed arbitrary bytes: it never raises, never loses a line, and what it
makes of a stream does not depend on how the reads split it.

Most of what tmux sends is escaped, but not all of it: a program in a pane names its window
with an escape sequence (``%window-renamed @1 NAME`` then carries NAME's bytes raw), and a
guard or an id is only as well formed as the tmux that wrote it. A parser that raised would end
the daemon's watcher on that session, so every property here is over bytes no one chose.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from roost.pane.tmux.control import Parser, notification
from roost.pane.tmux.notifications import Notification, Output, Reply, Unknown
from tests.conftest import examples

EXAMPLES = examples(400)

PREFIXES = [
    b"%begin",
    b"%end",
    b"%error",
    b"%output",
    b"%extended-output",
    b"%window-renamed",
    b"%session-renamed",
    b"%layout-change",
    b"%window-add",
    b"%pause",
    b"%continue",
    b"%exit",
    b"%subscription-changed",
    b"%client-session-changed",
    b"%",
    b"",
]
FIELDS = st.one_of(
    st.binary(max_size=12).map(lambda field: field.replace(b"\n", b"")),
    st.from_regex(rb"\A-{0,3}[0-9]{1,6}\Z"),
    st.just(b"9" * 5000),  # past Python's limit on digits an int() may parse
    st.sampled_from([b"%1", b"@1", b"$1", b"-", b"--1", b":", b"\\", b"\\377", b"\xff\xfe", b"\x1b]0;x\x07"]),
)
LINE = st.one_of(
    st.builds(
        lambda head, fields: b" ".join([head, *fields]),
        st.sampled_from(PREFIXES),
        st.lists(FIELDS, max_size=5),
    ),
    # A guard's shape exactly (three fields), so its numbers are what varies.
    st.builds(
        lambda head, fields: b" ".join([head, *fields]),
        st.sampled_from([b"%begin", b"%end", b"%error"]),
        st.lists(FIELDS, min_size=3, max_size=3),
    ),
)
STREAM = st.one_of(
    st.binary(max_size=2000),
    st.lists(LINE, max_size=30).map(lambda lines: b"\n".join(lines) + b"\n"),
)


def parse(stream: bytes, cuts: list[int]) -> list[Notification]:
    parser = Parser()
    found: list[Notification] = []
    last = 0
    for cut in sorted({min(c, len(stream)) for c in cuts}):
        found += parser.feed(stream[last:cut])
        last = cut
    found += parser.feed(stream[last:])
    return found + parser.finish()


@settings(max_examples=EXAMPLES, deadline=None, database=None)
@given(stream=STREAM, cuts=st.lists(st.integers(min_value=0, max_value=2500), max_size=8))
def test_no_stream_makes_the_parser_raise_and_the_split_never_matters(stream: bytes, cuts: list[int]) -> None:
    whole = parse(stream, [])
    assert parse(stream, cuts) == whole
    for item in whole:
        if isinstance(item, Output):
            item.data  # the lazy unescape of whatever the line held must not raise either  # noqa: B018


@settings(max_examples=EXAMPLES, deadline=None, database=None)
@given(line=LINE)
def test_every_line_outside_a_block_is_a_notification_or_kept_as_unknown(line: bytes) -> None:
    item = notification(line)
    assert isinstance(item, Notification)
    if isinstance(item, Unknown):
        assert item.line == line  # kept whole, for the log to show


@settings(max_examples=EXAMPLES, deadline=None, database=None)
@given(body=st.lists(LINE, max_size=10))
def test_a_block_holds_every_line_until_its_own_guard(body: list[bytes]) -> None:
    """Whatever the reply's lines look like (guards of other blocks included), they are data."""
    lines = [line for line in body if not line.startswith((b"%end 1 7 ", b"%error 1 7 "))]
    stream = b"\n".join([b"%begin 1 7 1", *lines, b"%end 1 7 1", b""])
    found = parse(stream, [])
    assert found == [Reply(1, 7, 1, True, tuple(lines))]
