"""Where a webhook may point: the table in docs/contracts.md ("Webhook URLs"), walked row by row,
through the URL rule and through the request body's model (which gives the same words)."""

from __future__ import annotations

import asyncio
import ipaddress
import socket

import pytest

from roost.base.errors import UsageError
from roost.base.validation import Invalid, validated
from roost.faces.api import schemas
from roost.services.notify import destinations
from tests.contracts.tables import table

ROWS = table("Webhook URLs")
TOKEN = "0123456789abcdef0123"


def resolver(cell: str) -> destinations.Resolver:
    """A lookup that answers what the table's "resolves to" cell says (empty: never asked)."""

    async def lookup(host: str, port: int) -> list[str]:
        assert cell, f"{host} was looked up"
        if cell == "nothing":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [address.strip() for address in cell.split(",")]

    return lookup


def answer(url: str, resolves: str) -> str:
    try:
        destination = destinations.parse(url)
        asyncio.run(destinations.addresses(destination, resolver(resolves)))
    except UsageError as refused:
        assert refused.extra == {"field": "url"}
        return refused.message
    return "accepted"


def expected(row: dict[str, str], got: str) -> None:
    want = row["answer"]
    if want.endswith(" …"):
        assert got.startswith(want.removesuffix(" …")), (row, got)
    else:
        assert got == want, (row, got)


def test_the_table_covers_every_kind_of_answer() -> None:
    answers = [row["answer"] for row in ROWS]
    assert answers.count("accepted") >= 10
    for words in ("points to", "names the host", "resolves to", "does not resolve", "user or password"):
        assert any(words in a for a in answers), words


@pytest.mark.parametrize("row", ROWS, ids=[f"{row['url']} {row['resolves to']}" for row in ROWS])
def test_each_url_is_answered_as_the_table_says(row: dict[str, str]) -> None:
    expected(row, answer(row["url"], row["resolves to"]))


@pytest.mark.parametrize("row", [r for r in ROWS if not r["resolves to"]], ids=lambda row: row["url"])
def test_the_request_body_refuses_the_same_urls_in_the_same_words(row: dict[str, str]) -> None:
    try:
        validated(schemas.Hook, {"url": row["url"], "token": TOKEN})
    except Invalid as refused:
        assert refused.field == "url"
        expected(row, str(refused))
    else:
        assert row["answer"] == "accepted", row


def test_a_url_over_the_limit_is_too_long_in_both_places_and_one_at_it_is_not() -> None:
    longest = "http://127.0.0.1/" + "a" * (destinations.LONGEST - len("http://127.0.0.1/"))
    assert destinations.parse(longest).host == "127.0.0.1"
    assert validated(schemas.Hook, {"url": longest, "token": TOKEN}).url == longest
    words = f"url is too long: {destinations.LONGEST + 1} characters, at most {destinations.LONGEST}"
    with pytest.raises(UsageError, match=f"^{words}$"):
        destinations.parse(longest + "a")
    with pytest.raises(Invalid, match=f"^{words}$") as refused:
        validated(schemas.Hook, {"url": longest + "a", "token": TOKEN})
    assert refused.value.field == "url"


def test_a_delivery_connects_to_the_checked_address_and_names_the_host() -> None:
    named = destinations.parse("http://localhost:8000/hook?client=7#part")
    assert named.named and named.authority == "localhost:8000"
    assert named.at("::1") == "http://[::1]:8000/hook?client=7"
    secure = destinations.parse("https://box.tail1234.ts.net")
    assert secure.authority == "box.tail1234.ts.net"
    assert secure.at("100.101.102.103") == "https://100.101.102.103:443/"
    literal = destinations.parse("http://[::1]/x")
    assert not literal.named and literal.authority == "[::1]"
    assert asyncio.run(destinations.addresses(literal, resolver(""))) == ["::1"]


def test_the_system_resolver_answers_for_localhost() -> None:
    found = asyncio.run(destinations.resolve("localhost", 80))
    assert found and all(destinations.allowed(ipaddress.ip_address(a)) for a in found)
