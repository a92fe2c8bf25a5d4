"""``--since``: spans and RFC 3339 times become moments; anything else is refused, saying what is
wanted, and the pattern ``/openapi.json`` publishes agrees with the parser."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roost.base.errors import UsageError
from roost.services.ledger.since import PATTERN, parse

NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("text", "back"),
    [("7d", 7 * 86400), ("3h", 3 * 3600), ("15m", 15 * 60), ("30s", 30), ("2w", 14 * 86400), ("0m", 0)],
)
def test_a_span_is_that_long_before_now(text: str, back: int) -> None:
    assert parse(text, NOW) == NOW - back
    assert re.fullmatch(PATTERN, text)


@pytest.mark.parametrize(
    ("text", "moment"),
    [
        ("2026-12-01T09:00:00Z", datetime(2026, 12, 1, 9, tzinfo=UTC)),
        ("2026-12-01t09:00:00z", datetime(2026, 12, 1, 9, tzinfo=UTC)),
        ("2026-12-01 09:00:00+02:00", datetime(2026, 12, 1, 7, tzinfo=UTC)),
        ("2026-12-01T09:00:00.250-01:30", datetime(2026, 12, 1, 10, 30, 0, 250_000, tzinfo=UTC)),
        ("2026-12-01T09:00:00.123456789Z", datetime(2026, 12, 1, 9, 0, 0, 123_456, tzinfo=UTC)),
    ],
)
def test_an_rfc_3339_time_is_that_moment(text: str, moment: datetime) -> None:
    assert parse(text, NOW) == moment.timestamp()
    assert re.fullmatch(PATTERN, text)


def test_a_span_reaching_before_1970_is_1970() -> None:
    assert parse("999999999w", NOW) == 0.0


@pytest.mark.parametrize(
    "text",
    [
        "",
        "7",
        "d",
        "7x",
        "-7d",
        "7 d",
        "1.5h",
        "7d ",
        "１d",  # a digit, but not an ASCII one
        "yesterday",
        "2026-12-01",
        "2026-12-01T09:00:00",  # no zone: which 9 o'clock?
        "2026-12-01T09:00Z",
    ],
)
def test_anything_else_is_refused_by_the_pattern_and_the_parser(text: str) -> None:
    assert not re.fullmatch(PATTERN, text)
    with pytest.raises(UsageError) as refused:
        parse(text, NOW)
    assert refused.value.exit_code == 1 and refused.value.status == 400
    assert refused.value.message == (
        "--since must be a span back from now like 7d, 3h or 15m (units s, m, h, d, w), "
        "or an RFC 3339 time like 2026-12-01T09:00:00Z"
    )


@pytest.mark.parametrize(
    "text", ["2026-02-31T00:00:00Z", "2026-13-01T00:00:00Z", "2026-01-01T24:00:00Z", "0000-01-01T00:00:00Z"]
)
def test_a_time_of_the_right_shape_that_names_no_moment_is_refused_by_the_pattern_too(text: str) -> None:
    assert not re.fullmatch(PATTERN, text)
    with pytest.raises(UsageError, match="RFC 3339"):
        parse(text, NOW)


@settings(max_examples=300, deadline=None)
@given(st.from_regex(PATTERN, fullmatch=True))
def test_every_value_the_pattern_takes_is_a_moment(text: str) -> None:
    parse(text, NOW)
