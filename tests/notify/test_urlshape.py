"""The webhook URL pattern (:mod:`roost.services.notify.urlshape`) says exactly what the destination rule
accepts: every URL the pattern makes is accepted, every address in any spelling matches it
exactly when the rule allows the address, and a URL ``urlsplit`` would read past is refused."""

from __future__ import annotations

import ipaddress
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roost.base.errors import UsageError
from roost.services.notify import destinations
from roost.services.notify.urlshape import PATTERN, SHAPE
from tests.contracts.tables import table

ROWS = table("Webhook URLs")


def accepted(url: str) -> bool:
    try:
        destinations.parse(url)
    except UsageError:
        return False
    return True


@settings(max_examples=400, deadline=None)
@given(st.from_regex(PATTERN, fullmatch=True))
def test_every_url_of_the_pattern_is_accepted(url: str) -> None:
    if len(url) <= destinations.LONGEST:
        assert accepted(url), url


@pytest.mark.parametrize("row", ROWS, ids=[row["url"] for row in ROWS])
def test_the_contract_tables_urls_match_the_pattern_as_the_rule_answers(row: dict[str, str]) -> None:
    url = row["url"].strip("`")
    assert bool(SHAPE.fullmatch(url)) == accepted(url), url


def spell(address: ipaddress.IPv6Address, chooser: random.Random) -> str:
    """One of the ways to write ``address``: leading zeros or not, any case, one run of zero
    groups as ``::`` or none, the last 32 bits dotted or not."""
    groups = [int(address.exploded.replace(":", "")[i : i + 4], 16) for i in range(0, 32, 4)]
    dotted = chooser.random() < 0.3
    width = 6 if dotted else 8
    texts = [format(g, "x").zfill(chooser.randint(len(format(g, "x")), 4)) for g in groups[:width]]
    texts = [t.upper() if chooser.random() < 0.3 else t for t in texts]
    tail = [str(ipaddress.IPv4Address(address.packed[12:]))] if dotted else []
    runs = [(a, b) for a in range(width) for b in range(a + 1, width + 1) if not any(groups[a:b])]
    if runs and chooser.random() < 0.7:
        start, stop = chooser.choice(runs)
        return ":".join(texts[:start]) + "::" + ":".join([*texts[stop:], *tail])
    return ":".join([*texts, *tail])


ADDRESSES = st.one_of(
    st.integers(0, 2**128 - 1),
    st.integers(0, 2**32 - 1).map(lambda v4: 0xFFFF00000000 | v4),
    st.integers(0, 2**80 - 1).map(lambda low: 0xFD7A115CA1E0 << 80 | low),
    st.sampled_from([1, 0, 0xFFFF7F000001, 0xFFFF64400001, 0xFFFF64800001, 0xFD7A115CA1E1 << 80]),
)


@settings(max_examples=600, deadline=None)
@given(ADDRESSES, st.randoms(use_true_random=False))
def test_an_ipv6_address_matches_in_any_spelling_exactly_when_the_rule_allows_it(
    value: int, chooser: random.Random
) -> None:
    address = ipaddress.IPv6Address(value)
    url = f"http://[{spell(address, chooser)}]:8000/hook"
    assert bool(SHAPE.fullmatch(url)) == destinations.allowed(address) == accepted(url), url


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["", ".", ":80", ".:8080", "/x?y#z"]))
def test_an_ipv4_address_matches_exactly_when_the_rule_allows_it(value: int, rest: str) -> None:
    address = ipaddress.IPv4Address(value)
    url = f"https://{address}{rest}"
    assert bool(SHAPE.fullmatch(url)) == destinations.allowed(address) == accepted(url), url


@pytest.mark.parametrize(
    "url",
    [
        "http://abc[::1]/",
        "http://[::1]x:80/",
        "http://[::1]./",
        "http://127.0.0.1:65536/",
        "http://127.0.0.1:00/",
        "http://01.0.0.1/",
        "http://[127.0.0.1]/",
        "http://[::1%25lo]/",
        "http://box.-tail.ts.net/",
        "http:/127.0.0.1/",
    ],
)
def test_what_urlsplit_would_read_past_is_refused(url: str) -> None:
    assert not SHAPE.fullmatch(url)
    with pytest.raises(UsageError):
        destinations.parse(url)
