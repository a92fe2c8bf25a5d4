"""Token usage and cost: one line per turn that reported any, and their sums per harness and model.

Where the numbers come from, and what is counted:

- **Tokens**: a headless session's record carries, in ``usage.tokens``, the usage its adapter
  put in the answer to the turn's ``session/prompt`` (ACP's ``PromptResponse.usage``: that
  turn's tokens, as Claude's and Codex's adapters fill it). It is written once, when the turn
  ends: the record's ``completed_revision`` moves. A turn that reported none is not counted.
- **Cost**: ACP's ``usage_update`` carries the session's *cumulative* cost; a turn's cost is how
  far it moved since the last turn counted. When it moves back (a new adapter process counting
  from zero after a resume) the new amount is all new. The last amount counted per session is
  read back from this file when the daemon starts, so a restart never counts a cost twice.
- **Hooks**: no hook payload Claude Code or Codex sends carries token counts, so a terminal
  session has no usage here.
- **Model**: the record's ``model`` (what the adapter's config options say it runs), else
  ``unknown``; the harness likewise.

A turn is counted only when the daemon sees it end. The roster a restarted daemon rebuilds (and
the history an adapter replays after ``session/load``, which the runner never claims) shows
turns that ended before, never turns ending now, so nothing is counted twice; a turn that
ended while no daemon ran is not counted at all.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import re
from collections.abc import Iterable
from typing import Any, NamedTuple

from roost.base import paths
from roost.services.ledger.lines import Lines
from roost.truth.roster import records
from roost.truth.roster.records import Record
from roost.truth.roster.times import from_wire, to_wire

log = logging.getLogger("rosterd")

FILE = "usage.jsonl"
UNKNOWN = "unknown"
TOKENS = {
    "inputTokens": "input",
    "outputTokens": "output",
    "thoughtTokens": "thought",
    "cachedReadTokens": "cached_read",
    "cachedWriteTokens": "cached_write",
    "totalTokens": "total",
}
"""ACP's names for a turn's token counts, and the ledger's."""
SPENT = re.compile(
    rb'^\{"at":"[^"]*","session_key":(?P<key>"[^"\n]*"),"cost_total":(?P<total>[0-9][0-9.eE+-]*),',
    re.MULTILINE,
)
"""A line this module wrote that read a cumulative cost, read without JSON."""
COUNT_MAX = 1 << 53
CURRENCY = re.compile(r"[A-Z]{3}")
DIGITS = 9
"""Decimal places a cost keeps (a sum of floats is rounded to them)."""


class Usage:
    """The usage file, and the cumulative cost counted so far per live session."""

    def __init__(self, lines: Lines | None = None) -> None:
        self.lines = lines or Lines(paths.ledger_dir() / FILE)
        self._spent: dict[str, float] = {}

    def recall(self) -> None:
        """Read back the cumulative cost last counted per session (before :meth:`baseline`; in
        a thread if it likes)."""
        spent: dict[str, float] = {}
        try:
            for match in self.lines.matches(SPENT):
                with contextlib.suppress(ValueError):
                    key, total = json.loads(match["key"]), _amount(float(match["total"]))
                    if isinstance(key, str) and total is not None:
                        spent[key] = total
        except OSError as error:
            log.warning("the usage ledger could not be read back (%s): a cost may be counted again", error)
        self._spent = spent

    def baseline(self, present: Iterable[Record]) -> None:
        """The roster as the daemon starts: only its sessions' costs are worth remembering."""
        keys = {record.session_key for record in present}
        self._spent = {key: spent for key, spent in self._spent.items() if key in keys}

    def observe(self, before: Record | None, after: Record, at: float) -> None:
        """One published change of a session; a turn that ended is written, once."""
        key = after.session_key
        if after.liveness == records.ENDED:
            self.forget(key)
            return
        if before is None or after.completed_revision in (None, before.completed_revision):
            return
        usage = after.usage or {}
        tokens = _tokens(usage.get("tokens"))
        cost, total = self._cost(key, usage.get("cost"))
        if tokens is None and cost is None:
            return
        self.lines.append(
            {
                "at": to_wire(at),
                "session_key": key,
                "cost_total": total,  # the cumulative cost read (or null): early, for a restart to find
                "harness": after.harness or UNKNOWN,
                "model": after.model or UNKNOWN,
                "lane": after.lane,
                "tokens": tokens or {},
                "cost": cost,
            }
        )

    def forget(self, key: str) -> None:
        """The session ended: its cost is counted, whatever comes after is another's."""
        self._spent.pop(key, None)

    def _cost(self, key: str, cost: object) -> tuple[dict[str, Any] | None, float | None]:
        """This turn's cost and the cumulative amount it was read from, or (None, None)."""
        if not isinstance(cost, dict) or (amount := _amount(cost.get("amount"))) is None:
            return None, None
        spent = self._spent.get(key, 0.0)
        self._spent[key] = amount
        moved = amount - spent if amount >= spent else amount
        currency = cost.get("currency")
        currency = currency if isinstance(currency, str) and CURRENCY.fullmatch(currency) else UNKNOWN
        return {"amount": round(moved, DIGITS), "currency": currency}, amount

    def summary(self, since: float | None = None) -> dict[str, Any]:
        """The sums of every turn kept (at or after ``since``): ``rows`` per harness and model,
        ``total`` over all. Runs in a thread if it likes."""
        rows: dict[tuple[str, str], _Sum] = {}
        total = _Sum()
        for doc in self.lines.read():
            turn = _turn(doc, since)
            if turn is not None:
                for group in (rows.setdefault((turn.harness, turn.model), _Sum()), total):
                    group.add(turn)
        return {
            "rows": [
                {"harness": harness, "model": model, **group.to_json()}
                for (harness, model), group in sorted(rows.items())
            ],
            "total": total.to_json(),
        }


class _Turn(NamedTuple):
    harness: str
    model: str
    key: str
    tokens: dict[str, int]
    cost: tuple[str, float] | None


class _Sum:
    def __init__(self) -> None:
        self.turns = 0
        self.sessions: set[str] = set()
        self.tokens = dict.fromkeys(TOKENS.values(), 0)
        self.cost: dict[str, float] = {}

    def add(self, turn: _Turn) -> None:
        self.turns += 1
        self.sessions.add(turn.key)
        for name, count in turn.tokens.items():
            self.tokens[name] += count
        if turn.cost is not None:
            currency, amount = turn.cost
            self.cost[currency] = self.cost.get(currency, 0.0) + amount

    def to_json(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "sessions": len(self.sessions),
            "tokens": dict(self.tokens),
            "cost": {currency: round(amount, DIGITS) for currency, amount in sorted(self.cost.items())},
        }


def _tokens(reported: object) -> dict[str, int] | None:
    """A turn's counts under the ledger's names; None when it reported none."""
    if not isinstance(reported, dict):
        return None
    counts = {name: reported.get(wire) for wire, name in TOKENS.items()}
    kept = {name: count for name, count in counts.items() if _count(count)}
    return kept or None


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < COUNT_MAX


def _amount(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
        return float(value)
    return None


def _turn(doc: dict[str, Any], since: float | None) -> _Turn | None:
    """One line read back, or None when it is before ``since`` or not a line this module wrote."""
    try:
        at = from_wire(doc.get("at"))
    except ValueError:
        return None
    key, harness, model = doc.get("session_key"), doc.get("harness"), doc.get("model")
    if at is None or (since is not None and at < since):
        return None
    if not (isinstance(key, str) and isinstance(harness, str) and isinstance(model, str)):
        return None
    kept = doc.get("tokens") if isinstance(doc.get("tokens"), dict) else {}
    tokens = _tokens({wire: kept.get(name) for wire, name in TOKENS.items()}) or {}
    cost = doc.get("cost") if isinstance(doc.get("cost"), dict) else {}
    amount, currency = _amount(cost.get("amount")), cost.get("currency")
    spent = (currency, amount) if isinstance(currency, str) and amount is not None else None
    return _Turn(harness, model, key, tokens, spent)
