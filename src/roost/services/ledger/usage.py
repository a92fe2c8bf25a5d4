"""Token usage and cost: one line per turn that used any, whatever its lane, and their sums.

Where a turn's numbers come from:

- **A headless session** (ACP): its record carries, in ``usage.tokens``, the usage its adapter
  put in the answer to the turn's ``session/prompt`` (that turn's tokens, as Claude's and
  Codex's adapters fill it), written once the turn ends: the record's ``completed_revision``
  moves. ACP's ``usage_update`` carries the session's *cumulative* cost; the adapter's figure
  for a turn is how far it moved since the last turn counted (when it moves back, a new adapter
  process counting from zero after a resume, the new amount is all new). The last amount counted
  per session is read back from this file when the daemon starts, so a restart never counts a
  cost twice.
- **An interactive session** (a pane): the answers its agent recorded in its own transcript
  since the last turn counted (:mod:`roost.services.ledger.transcripts`), read when the turn ends.

**Cost** is the price table's (:mod:`roost.services.ledger.prices`) for the turn's tokens and model;
where the table does not know the model, the agent's own figure (ACP's) when it gave one;
else it is unknown: the turn's ``cost`` is null and it is counted in ``unpriced``, never
guessed. ``priced`` says which (``prices``, ``agent``, or null).

A line holds keys, names, words and numbers: never a prompt, a reply or other agent text.
Besides the file, the sums every budget needs are kept as turns are counted (per session for
as long as it lives, per folder and per UTC day for the last two days), read back from the file
when the daemon starts, so a budget is checked without reading the file again.

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
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from roost.base import paths
from roost.services.ledger.lines import Lines
from roost.services.ledger.prices import DIGITS, Prices
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
NAMES = tuple(TOKENS.values())
PRICES, AGENT = "prices", "agent"
"""Whose figure a turn's cost is: the price table's, or the agent's own."""
BY = ("session", "folder", "node", "day")
"""What ``--by`` may group the sums by, besides the default: harness and model."""
SPENT = re.compile(
    rb'^\{"at":"[^"]*","session_key":(?P<key>"[^"\n]*"),"cost_total":(?P<total>[0-9][0-9.eE+-]*),',
    re.MULTILINE,
)
"""A line this module wrote that read a cumulative cost, read without JSON."""
COUNT_MAX = 1 << 53
CURRENCY = re.compile(r"[A-Z]{3}")
DAYS_KEPT = 2
"""UTC days whose sums per folder are kept for the budgets: today and yesterday."""


def day_of(at: float) -> str:
    """The UTC day of ``at``, as ``YYYY-MM-DD``: the swarm's days, the same on every node."""
    return time.strftime("%Y-%m-%d", time.gmtime(at))


class Turn(NamedTuple):
    """What one turn used: its tokens (the ledger's names), its cost as ``(amount, currency)``
    or None (unknown), whose figure that is, and its model."""

    tokens: Mapping[str, int]
    cost: tuple[float, str] | None
    priced: str | None
    model: str | None


@dataclass
class Sum:
    """Turns added up: how many, of how many sessions, their tokens, what their known costs
    come to per currency, and how many had no known cost."""

    turns: int = 0
    unpriced: int = 0

    def __post_init__(self) -> None:
        self.sessions: set[str] = set()
        self.tokens = dict.fromkeys(NAMES, 0)
        self.cost: dict[str, float] = {}

    def add(self, key: str, tokens: Mapping[str, int], cost: tuple[float, str] | None) -> None:
        self.turns += 1
        self.sessions.add(key)
        for name in NAMES:
            self.tokens[name] += tokens.get(name, 0)
        if cost is None:
            self.unpriced += 1
        else:
            amount, currency = cost
            self.cost[currency] = self.cost.get(currency, 0.0) + amount

    def spent(self, currency: str) -> float:
        return round(self.cost.get(currency, 0.0), DIGITS)

    def to_json(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "sessions": len(self.sessions),
            "tokens": dict(self.tokens),
            "cost": {currency: round(amount, DIGITS) for currency, amount in sorted(self.cost.items())},
            "unpriced": self.unpriced,
        }


class Usage:
    """The usage file, the cumulative ACP cost counted so far per live session, and the sums
    the budgets read (per session, and per folder for the last two UTC days)."""

    def __init__(self, lines: Lines | None = None, prices: Prices | None = None) -> None:
        self.lines = lines or Lines(paths.ledger_dir() / FILE)
        self._prices = prices
        self._spent: dict[str, float] = {}
        self.sessions: dict[str, Sum] = {}
        self.last: dict[str, dict[str, Any]] = {}
        """Each session's last turn counted, as its record's ``spend.last`` shows it."""
        self.days: dict[str, dict[str, Sum]] = {}
        """UTC day to folder to the sums of its turns, for the last :data:`DAYS_KEPT` days."""
        self.reads: dict[str, dict[str, Any]] = {}
        """Each pane session's transcript and the offset its last counted turn ended at."""

    @property
    def prices(self) -> Prices:
        """The price table, loaded on first use (the packaged one and the user's)."""
        if self._prices is None:
            self._prices = Prices.load()
        return self._prices

    def recall(self) -> None:
        """Read back what the file says of the sessions still counting: the cumulative ACP cost
        last counted, each session's sums, the days' sums, and where each pane's transcript was
        counted to (before :meth:`baseline`; in a thread if it likes)."""
        spent: dict[str, float] = {}
        try:
            for match in self.lines.matches(SPENT):
                with contextlib.suppress(ValueError):
                    key, total = json.loads(match["key"]), _amount(float(match["total"]))
                    if isinstance(key, str) and total is not None:
                        spent[key] = total
            for doc in self.lines.read():
                self._tally(doc)
        except OSError as error:
            log.warning("the usage ledger could not be read back (%s): a cost may be counted again", error)
        self._spent = spent
        self._trim()

    def baseline(self, present: Iterable[Record]) -> None:
        """The roster as the daemon starts: only its sessions' costs and sums are worth keeping."""
        keys = {record.session_key for record in present}
        self._spent = {key: spent for key, spent in self._spent.items() if key in keys}
        for kept in (self.sessions, self.last, self.reads):
            for key in [key for key in kept if key not in keys]:
                del kept[key]

    def acp_turn(self, before: Record | None, after: Record) -> Turn | None:
        """The turn a headless session's record says ended (its ``completed_revision`` moved),
        or None: no turn ended, or it used nothing its adapter reported."""
        if before is None or after.completed_revision in (None, before.completed_revision):
            return None
        usage = after.usage or {}
        tokens = _tokens(usage.get("tokens"))
        agent = self._cost(after.session_key, usage.get("cost"))
        if tokens is None and agent is None:
            return None
        return self.priced(tokens or {}, after.model, agent)

    def running(self, record: Record) -> Turn | None:
        """What a headless session's turn under way has cost so far by its adapter's cumulative
        figure (nothing is counted); None when it said none, or nothing moved."""
        cost = (record.usage or {}).get("cost")
        if not isinstance(cost, dict) or (amount := _amount(cost.get("amount"))) is None:
            return None
        spent = self._spent.get(record.session_key, 0.0)
        currency = cost.get("currency")
        if amount <= spent or not isinstance(currency, str):
            return None
        return Turn({}, (round(amount - spent, DIGITS), currency), AGENT, record.model)

    def priced(
        self, tokens: Mapping[str, int], model: str | None, agent: tuple[float, str] | None = None
    ) -> Turn:
        """A turn of ``tokens`` of ``model``, costed by the table, else by the ``agent``'s figure."""
        table = self.prices.cost(model, tokens) if tokens else None
        if table is not None:
            return Turn(tokens, table, PRICES, model)
        return Turn(tokens, agent, AGENT if agent is not None else None, model)

    def count(
        self, record: Record, turn: Turn, at: float, read: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Write one turn of ``record``'s session and add it up; the session's spend as its
        record carries it (``spend``). ``read`` is where a pane's transcript was read to."""
        key = record.session_key
        cost = (
            None if turn.cost is None else {"amount": round(turn.cost[0], DIGITS), "currency": turn.cost[1]}
        )
        doc = {
            "at": to_wire(at),
            "session_key": key,
            "cost_total": self._spent.get(key) if record.lane == "headless" else None,
            "harness": record.harness or UNKNOWN,
            "model": turn.model or record.model or UNKNOWN,
            "lane": record.lane,
            "name": record.name,
            "folder": record.cwd,
            "tokens": {name: count for name, count in turn.tokens.items() if name in NAMES and count},
            "cost": cost,
            "priced": turn.priced,
            **({"read": dict(read)} if read is not None else {}),
        }
        self.lines.append(doc)
        self._tally(doc)
        self._trim()
        return self.spend(key) or {}

    def spend(self, key: str) -> dict[str, Any] | None:
        """What session ``key`` has used and spent, as its record's ``spend`` shows it; None
        before its first turn counted."""
        total = self.sessions.get(key)
        if total is None:
            return None
        summed = total.to_json()
        del summed["sessions"]
        return {**summed, "last": self.last.get(key)}

    def forget(self, key: str) -> None:
        """The session ended: its cost is counted, whatever comes after is another's."""
        for kept in (self._spent, self.sessions, self.last, self.reads):
            kept.pop(key, None)

    def folder_spent(self, day: str, currency: str, folder: str | None = None) -> float:
        """What this node's turns of ``day`` cost in ``currency``: in ``folder`` and the folders
        under it, or everywhere when it is None."""
        folders = self.days.get(day, {})
        return round(
            sum(
                total.spent(currency)
                for name, total in folders.items()
                if folder is None or within(name, folder)
            ),
            DIGITS,
        )

    def _cost(self, key: str, cost: object) -> tuple[float, str] | None:
        """This turn's cost by the adapter's cumulative figure, or None."""
        if not isinstance(cost, dict) or (amount := _amount(cost.get("amount"))) is None:
            return None
        spent = self._spent.get(key, 0.0)
        self._spent[key] = amount
        moved = amount - spent if amount >= spent else amount
        currency = cost.get("currency")
        currency = currency if isinstance(currency, str) and CURRENCY.fullmatch(currency) else UNKNOWN
        return round(moved, DIGITS), currency

    def _tally(self, doc: Mapping[str, Any]) -> None:
        """Add one line (written now, or read back) to the sums the budgets and records read."""
        turn = _turn(doc, None)
        if turn is None:
            return
        self.sessions.setdefault(turn.key, Sum()).add(turn.key, turn.tokens, turn.cost)
        cost = None if turn.cost is None else {"amount": turn.cost[0], "currency": turn.cost[1]}
        self.last[turn.key] = {
            "at": doc.get("at"),
            "model": turn.model,
            "tokens": dict(turn.tokens),
            "cost": cost,
        }
        folders = self.days.setdefault(day_of(turn.at), {})
        folders.setdefault(turn.folder or "", Sum()).add(turn.key, turn.tokens, turn.cost)
        read = doc.get("read")
        if isinstance(read, dict) and isinstance(read.get("path"), str) and _count(read.get("offset")):
            self.reads[turn.key] = {"path": read["path"], "offset": read["offset"]}

    def _trim(self) -> None:
        for day in sorted(self.days)[:-DAYS_KEPT]:
            del self.days[day]

    def summary(self, since: float | None = None, by: str | None = None) -> dict[str, Any]:
        """The sums of every turn kept (at or after ``since``): ``rows`` per harness and model,
        or per what ``by`` names (one of :data:`BY`), and ``total`` over all. Runs in a thread
        if it likes."""
        if by is not None and by not in BY:
            raise ValueError(f"no grouping {by!r}")
        rows: dict[tuple[str, ...], _Row] = {}
        total = Sum()
        for doc in self.lines.read():
            turn = _turn(doc, since)
            if turn is None:
                continue
            group = _group(turn, by)
            row = rows.get(group)
            if row is None:
                row = rows[group] = _Row(group)
            row.read(turn)
            total.add(turn.key, turn.tokens, turn.cost)
        return {
            **({"by": by} if by is not None else {}),
            "rows": [row.to_json(by) for _, row in sorted(rows.items())],
            "total": total.to_json(),
        }


def within(folder: str, root: str) -> bool:
    """Whether ``folder`` is ``root`` or a folder under it (by path, not by what is on disk)."""
    root = root.rstrip("/") or "/"
    return folder == root or folder.startswith(root if root.endswith("/") else root + "/")


class _Read(NamedTuple):
    """One line read back."""

    at: float
    key: str
    harness: str
    model: str
    folder: str | None
    name: str | None
    tokens: dict[str, int]
    cost: tuple[float, str] | None


class _Row(Sum):
    """One row of a summary: its group's names, and the sums."""

    def __init__(self, group: tuple[str, ...]) -> None:
        super().__init__()
        self.group = group
        self.name: str | None = None
        self.harness: str | None = None

    def read(self, turn: _Read) -> None:
        self.add(turn.key, turn.tokens, turn.cost)
        self.name = turn.name or self.name
        self.harness = turn.harness

    def to_json(self, by: str | None = None) -> dict[str, Any]:
        sums = super().to_json()
        if by is None:
            return {"harness": self.group[0], "model": self.group[1], **sums}
        if by == "session":
            return {"session_key": self.group[0], "name": self.name, "harness": self.harness, **sums}
        return {by: self.group[0], **sums}


def _group(turn: _Read, by: str | None) -> tuple[str, ...]:
    if by is None:
        return (turn.harness, turn.model)
    if by == "session":
        return (turn.key,)
    if by == "folder":
        return (turn.folder or UNKNOWN,)
    if by == "day":
        return (day_of(turn.at),)
    return ("",)  # node: this node's own rows are one; the swarm's route names each


def _tokens(reported: object) -> dict[str, int] | None:
    """A turn's ACP counts under the ledger's names; None when it reported none."""
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


def _turn(doc: Mapping[str, Any], since: float | None) -> _Read | None:
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
    spent = (round(amount, DIGITS), currency) if isinstance(currency, str) and amount is not None else None
    folder, name = doc.get("folder"), doc.get("name")
    return _Read(
        at,
        key,
        harness,
        model,
        folder if isinstance(folder, str) else None,
        name if isinstance(name, str) else None,
        tokens,
        spent,
    )
