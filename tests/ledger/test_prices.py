"""The price table: shipped with a date and a source per model, amended by the user's file,
exact or nothing (an unknown model's cost is unknown, never a neighbour's)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from roost.services.ledger.prices import PriceError, Prices

ONE_OF_EACH = {"input": 1_000_000, "output": 1_000_000, "cached_read": 1_000_000, "cached_write": 1_000_000}


def test_every_packaged_price_says_when_it_was_taken_and_where(tmp_path: Path) -> None:
    table = Prices.load(tmp_path / "none.toml")
    assert table.problem is None
    assert len(table.entries) >= 8
    for price in table.entries.values():
        assert re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", price.taken), price.model
        assert price.source is not None and price.source.startswith("https://"), price.model
        assert price.currency == "USD"
        assert {"input", "output", "cached_read", "cached_write"} <= set(price.per_million)


def test_a_model_is_found_by_id_alias_or_dated_id_and_nothing_else(tmp_path: Path) -> None:
    table = Prices.load(tmp_path / "none.toml")
    opus = table.find("claude-opus-4-8")
    assert opus is not None
    assert table.find("claude-opus-4-5") is opus  # an alias
    assert table.find("claude-opus-4-8-20260528") is opus  # a dated id
    assert table.find("claude-sonnet-4-5-20250929") is table.find("claude-sonnet-4-6")
    for unknown in ("claude-opus-5-5", "claude-opus-4-9", "gpt-fake", "opus", "", None):
        assert table.find(unknown) is None, unknown
        assert table.cost(unknown, ONE_OF_EACH) is None


def test_a_cost_is_each_kind_of_token_at_its_own_rate(tmp_path: Path) -> None:
    table = Prices.load(tmp_path / "none.toml")
    # Opus 4.8: 5 in, 25 out, 0.50 cache read, 6.25 (5 min) or 10 (1 hour) cache write, per million.
    tokens = {"input": 1000, "output": 200, "cached_read": 30000, "cached_write": 400}
    assert table.cost("claude-opus-4-8", tokens) == (0.0275, "USD")
    assert table.cost("claude-opus-4-8", {**tokens, "cached_write_1h": 100}) == (0.027875, "USD")
    assert table.cost("gpt-5-codex", {"input": 1000, "cached_read": 30000, "output": 200}) == (0.007, "USD")
    assert table.cost("claude-haiku-4-5", {}) == (0.0, "USD")


def test_a_users_file_amends_a_price_adds_a_model_and_a_bad_one_is_left_out_whole(tmp_path: Path) -> None:
    user = tmp_path / "prices.toml"
    user.write_text(
        '[models."claude-opus-4-8"]\ninput = 4.0\n\n'
        '[models."my-proxy-model"]\ncurrency = "EUR"\ninput = 1\noutput = 2\ncached_read = 0.1\n'
        'cached_write = 1.5\ntaken = "2026-12-01"\n'
    )
    table = Prices.load(user)
    assert table.problem is None
    opus = table.find("claude-opus-4-8")
    assert opus is not None and opus.per_million["input"] == 4.0 and opus.per_million["output"] == 25.0
    assert table.cost("my-proxy-model", {"input": 2_000_000}) == (2.0, "EUR")
    assert table.cost("my-proxy-model", {"cached_write": 10, "cached_write_1h": 10}) is None  # no 1-hour rate

    for text, said in (
        ('[models."new-model"]\ninput = 1\n', "a new model needs"),
        ('[models."claude-opus-4-8"]\ninput = -1\n', "input must be a number of at least 0"),
        ('[models."claude-opus-4-8"]\nprice = 1\n', "unknown key 'price'"),
        ('[models."claude-opus-4-8"]\ncurrency = "dollars"\n', "currency must be a three-letter code"),
        ('[models."claude-opus-4-8"]\ntaken = "yesterday"\n', "taken must be the date"),
        ("[prices]\n", "prices go under [models."),
        ("not toml [", "cannot read it"),
    ):
        user.write_text(text)
        table = Prices.load(user)
        assert table.problem is not None and said in table.problem, (text, table.problem)
        assert table.find("claude-opus-4-8") is not None  # the packaged table stands
        assert table.find("claude-opus-4-8").per_million["input"] == 5.0


def test_a_price_table_built_by_hand_is_checked_as_a_file_is() -> None:
    with pytest.raises(PriceError, match="needs currency"):
        Prices.build(
            {"m": {"input": 1, "output": 1, "cached_read": 1, "cached_write": 1, "taken": "2026-12-01"}}
        )
