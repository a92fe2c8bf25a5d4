"""What a model's tokens cost: a table per model, shipped with roost and amendable by its user.

The packaged table (``prices.toml`` beside this module) says, per model id, what each kind of
token costs per million in one currency, the date the price was taken and where. A user's
``${XDG_CONFIG_HOME}/roost/prices.toml`` in the same shape is laid over it: an entry merges
key by key over the packaged one of its id, a new id is added. A user file that cannot be
used is left out whole (the packaged table stands) and :attr:`Prices.problem` says why, which
``rosterd doctor`` shows.

Pricing is exact or nothing. A model is found by its id, an alias, or its id less a trailing
date (``claude-sonnet-4-5-20250929``); anything else has no price, and a turn of it costs
``None``: its tokens are counted and its cost is unknown, never estimated from a neighbour.
Tokens are priced per answer where the agent records answers one by one (a transcript), so
a 1-hour cache write is priced at its own rate when the agent says how many it wrote.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roost.base import paths

FILE = "prices.toml"
PRICED = ("input", "output", "cached_read", "cached_write", "cached_write_1h")
"""The token kinds a price names, per million tokens; ``cached_write_1h`` is optional."""
REQUIRED = ("currency", "input", "output", "cached_read", "cached_write", "taken")
KEYS = frozenset({*PRICED, "currency", "taken", "source", "aliases"})
CURRENCY = re.compile(r"[A-Z]{3}")
DATED = re.compile(r"^(?P<model>.+?)-(?:20[0-9]{6}|[0-9]{4}-[0-9]{2}-[0-9]{2})$")
DIGITS = 9
"""Decimal places a cost keeps."""
PER = 1_000_000


@dataclass(frozen=True)
class Price:
    """One model's price: ``per_million`` holds each of :data:`PRICED` it names."""

    model: str
    currency: str
    per_million: Mapping[str, float]
    taken: str
    source: str | None

    def cost(self, tokens: Mapping[str, int]) -> float | None:
        """What ``tokens`` (the ledger's names; ``cached_write_1h`` the part of ``cached_write``
        written for an hour) cost; None when they hold a kind this price does not name."""
        hour = tokens.get("cached_write_1h", 0)
        counts = {
            "input": tokens.get("input", 0),
            "output": tokens.get("output", 0),
            "cached_read": tokens.get("cached_read", 0),
            "cached_write": tokens.get("cached_write", 0) - hour,
            "cached_write_1h": hour,
        }
        total = 0.0
        for kind, count in counts.items():
            if not count:
                continue
            rate = self.per_million.get(kind)
            if rate is None:
                return None
            total += count * rate
        return round(total / PER, DIGITS)

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "currency": self.currency,
            **dict(self.per_million),
            "taken": self.taken,
            "source": self.source,
        }


class PriceError(ValueError):
    """An entry of a prices file that cannot be used; the message names the file and the entry."""


@dataclass(frozen=True)
class Prices:
    """The table in force: the packaged entries with the user's laid over them."""

    entries: Mapping[str, Price]
    names: Mapping[str, str]
    """Every id and alias, to the entry it names."""
    problem: str | None = None
    """Why the user's file was left out, or None."""

    @classmethod
    def load(cls, user: Path | None = None) -> Prices:
        """The packaged table, and the user's file (default: beside ``rosterd.toml``'s default
        place) over it when it is usable."""
        packaged = _read(Path(__file__).with_name(FILE))
        path = user if user is not None else paths.config_home() / FILE
        try:
            over = _read(path) if path.exists() else {}
            return cls.build(_merge(packaged, over))
        except PriceError as error:
            return cls.build(packaged, problem=str(error))

    @classmethod
    def build(cls, tables: Mapping[str, Mapping[str, Any]], problem: str | None = None) -> Prices:
        entries: dict[str, Price] = {}
        names: dict[str, str] = {}
        for model, table in tables.items():
            entries[model] = _price(model, table)
            for name in (model, *table.get("aliases", ())):
                names[name] = model
        return cls(entries, names, problem)

    def find(self, model: str | None) -> Price | None:
        """The price of ``model``: by id or alias, then with a trailing date taken off."""
        if not model:
            return None
        found = self.names.get(model)
        if found is None and (dated := DATED.match(model)) is not None:
            found = self.names.get(dated["model"])
        return self.entries.get(found) if found is not None else None

    def cost(self, model: str | None, tokens: Mapping[str, int]) -> tuple[float, str] | None:
        """``(amount, currency)`` for ``tokens`` of ``model``; None when its cost is unknown."""
        price = self.find(model)
        amount = price.cost(tokens) if price is not None else None
        return None if price is None or amount is None else (amount, price.currency)


def _read(path: Path) -> dict[str, dict[str, Any]]:
    try:
        table = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise PriceError(f"{path}: cannot read it: {error}") from None
    unknown = sorted(set(table) - {"models"})
    if unknown:
        raise PriceError(f'{path}: unknown key {unknown[0]!r}: prices go under [models."<id>"]')
    models = table.get("models", {})
    if not isinstance(models, dict) or not all(isinstance(entry, dict) for entry in models.values()):
        raise PriceError(f'{path}: each model is a table, [models."<id>"]')
    for model, entry in models.items():
        extra = sorted(set(entry) - KEYS)
        if extra:
            raise PriceError(
                f"{path}: [models.{model!r}]: unknown key {extra[0]!r} (known: {', '.join(sorted(KEYS))})"
            )
        try:
            _check(model, entry, partial=True)
        except PriceError as error:
            raise PriceError(f"{path}: {error}") from None
    return models


def _merge(base: dict[str, dict[str, Any]], over: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    merged = {model: dict(entry) for model, entry in base.items()}
    for model, entry in over.items():
        merged[model] = {**merged.get(model, {}), **entry}
        missing = [key for key in REQUIRED if key not in merged[model]]
        if missing:
            raise PriceError(f"[models.{model!r}]: a new model needs {', '.join(missing)}")
    return merged


def _check(model: str, entry: Mapping[str, Any], partial: bool = False) -> None:
    where = f"[models.{model!r}]"
    for kind in PRICED:
        rate = entry.get(kind)
        if rate is None:
            continue
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not math.isfinite(rate) or rate < 0:
            raise PriceError(
                f"{where}: {kind} must be a number of at least 0 (per million tokens), got {rate!r}"
            )
    currency = entry.get("currency")
    if currency is not None and (not isinstance(currency, str) or not CURRENCY.fullmatch(currency)):
        raise PriceError(f"{where}: currency must be a three-letter code such as USD, got {currency!r}")
    taken = entry.get("taken")
    if taken is not None and (
        not isinstance(taken, str) or not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", taken)
    ):
        raise PriceError(f"{where}: taken must be the date the price was read, YYYY-MM-DD, got {taken!r}")
    for key in ("source",):
        if key in entry and not isinstance(entry[key], str):
            raise PriceError(f"{where}: {key} must be a string")
    aliases = entry.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(alias, str) and alias for alias in aliases):
        raise PriceError(f"{where}: aliases must be a list of model ids")
    if not partial:
        missing = [key for key in REQUIRED if key not in entry]
        if missing:
            raise PriceError(f"{where}: needs {', '.join(missing)}")


def _price(model: str, table: Mapping[str, Any]) -> Price:
    _check(model, table)
    return Price(
        model=model,
        currency=table["currency"],
        per_million={kind: float(table[kind]) for kind in PRICED if kind in table},
        taken=table["taken"],
        source=table.get("source"),
    )
