"""Budgets: how much a session, a folder or a day may spend, and what happens near and past it.

A budget is a limit in one currency on the cost of the turns of a *scope*:

- ``session``: one session's turns, over its whole life;
- ``folder``: the turns of every session whose folder is the budget's or under it, over one UTC
  day, on every node of the swarm;
- ``day``: every turn of every session, over one UTC day, on every node of the swarm.

Limits come from ``rosterd.toml`` (``[budget]``: a default for every session, one for the day,
one per folder) and from the API (``POST /budgets``), which are kept in ``budgets.json`` beside
the config, with the budgets a person lifted; one set through the API replaces the config's for
the same scope and target.

**What crossing one does.** Each scope's spend is checked whenever it moves: a turn counted here,
a look at a pane's turn under way, a peer's spend heard, a budget set or lifted, a new UTC day.
Reaching ``warn`` (a fraction of the limit) puts the budget on the record of every session of
this node in its scope (``budget``, state ``warning``, with a reason a person reads), and the
session whose turn crossed it has ``crossed_by`` naming itself: that record's change is the
``attention`` change (:func:`roost.truth.roster.changes.transitions`), once per crossing, so push,
webhooks and the page hear of it. Reaching the limit does the same with state ``exceeded``, and
then every face refuses a new prompt to a session in the scope
(:class:`~roost.base.errors.OverBudget`, code ``over_budget``), and a headless session's turn under way
is cancelled. A person lifts a budget (``POST /budgets/lift``, ``rosterd budget lift``, the web
app, MCP where allowed): the scope's budget reads ``lifted`` and prompts go through again until
its period ends (a session's life, a folder's or the swarm's day).

**Other nodes' spend, without waiting on them.** A record carries its session's ``spend``, and
every node hears every change of its peers' records: when a peer's session spends, this node
asks that peer's ledger for the day's sums per folder (``GET /swarm/ledger/usage?by=folder``,
signed like every peer request), in the background, and keeps the answer. A budget is checked
against this node's own sums and the last sums heard from each peer; a peer that is lost counts
with what it last said, and nothing (no prompt, no check) ever waits for a peer to answer. Each
node judges its own sessions against its own budgets: budgets are configured per node.

Only costs in the budget's currency count; a turn whose cost is unknown (a model the price
table does not know) adds nothing, and its tokens are counted as always.
"""

from __future__ import annotations

import asyncio
import calendar
import contextlib
import json
import logging
import math
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roost.base import cjson, files, paths
from roost.base.errors import OVER_BUDGET, OverBudget, SetupError, TargetGone, UsageError
from roost.services.ledger.prices import DIGITS
from roost.services.ledger.usage import Turn, Usage, day_of, within
from roost.truth.roster import records
from roost.truth.roster.claims import Claim
from roost.truth.roster.live import Live
from roost.truth.roster.precedence import LAUNCHER
from roost.truth.roster.records import Record
from roost.truth.roster.times import Clock, to_wire

log = logging.getLogger("rosterd")

SCOPES = records.BUDGET_SCOPES
SESSION, FOLDER, DAY = SCOPES
STATES = records.BUDGET_STATES
WARNING, EXCEEDED, LIFTED = STATES
_RANK = {LIFTED: 1, WARNING: 2, EXCEEDED: 3}
FILENAME = "budgets.json"
SCHEMA = "rosterd.budgets.v1"
CONFIG, API = "config", "api"
MOST = 256
"""Budgets the API may keep at once."""
LIMIT_MAX = 1e9
PEER_SETTLE = 0.3
"""Seconds a peer's spend is let settle before its ledger is asked (a turn moves it twice)."""


@dataclass(frozen=True)
class Settings:
    """``[budget]`` of ``rosterd.toml``: the currency budgets count in, the warning level (a
    fraction of a limit), and the limits it sets (None: none)."""

    currency: str = "USD"
    warn: float = 0.8
    day: float | None = None
    session: float | None = None
    folders: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Limit:
    """One budget: its scope and target (a session key, a folder, or None for the day), the
    limit and warning fraction, and where it was set."""

    scope: str
    target: str | None
    limit: float
    warn: float
    origin: str

    def to_json(self, currency: str) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "target": self.target,
            "limit": self.limit,
            "warn": self.warn,
            "currency": currency,
            "origin": self.origin,
        }


@dataclass(frozen=True)
class Crossing:
    """A scope's spend at or past a level: when it crossed, the session whose turn crossed it
    (None: another node's spend, or a budget set under what was spent), and why, in words."""

    level: str
    at: float
    crossed_by: str | None
    reason: str


def check_limit(value: object, name: str = "limit") -> float:
    """A limit as a number greater than 0; UsageError saying what it must be."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise UsageError(f"{name} must be a number greater than 0 and at most {LIMIT_MAX:g}", field=name)
    if not 0 < value <= LIMIT_MAX:
        raise UsageError(f"{name} must be a number greater than 0 and at most {LIMIT_MAX:g}", field=name)
    return float(value)


def check_warn(value: object) -> float:
    """A warning level as a fraction greater than 0 and at most 1."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise UsageError("warn must be a fraction of the limit, greater than 0 and at most 1", field="warn")
    return float(value)


def check_target(scope: str, target: object) -> str | None:
    """What a budget of ``scope`` is about: a session key, an absolute folder, or nothing."""
    if scope not in SCOPES:
        raise UsageError(f"scope must be one of {', '.join(SCOPES)}", field="scope")
    if scope == DAY:
        if target not in (None, ""):
            raise UsageError("a day budget has no target: it counts every session", field="target")
        return None
    if not isinstance(target, str) or not target or len(target) > 4096 or "\0" in target:
        what = "the session's key" if scope == SESSION else "an absolute folder"
        raise UsageError(f"a {scope} budget's target is {what}", field="target")
    if scope == FOLDER:
        if not target.startswith("/"):
            raise UsageError("a folder budget's target is an absolute folder", field="target")
        return target.rstrip("/") or "/"
    return target


class Store:
    """``budgets.json``: the budgets set through the API and the periods a person lifted, read
    once and written back whole on every change (0600)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.limits: dict[tuple[str, str | None], Limit] = {}
        self.lifted: dict[str, float] = {}
        """Each lifted period's id, and when it was lifted."""
        self._load()

    @classmethod
    def beside(cls, directory: Path) -> Store:
        return cls(directory / FILENAME)

    def _load(self) -> None:
        try:
            info = self.path.stat()
        except FileNotFoundError:
            return
        except OSError as error:
            raise SetupError(f"cannot read {self.path}: {error}") from None
        problem = files.unsafe(self.path, info)
        if problem:
            raise SetupError(problem)
        try:
            doc = json.loads(self.path.read_text())
            if doc.get("schema") != SCHEMA:
                raise ValueError(f"its schema is not {SCHEMA}")
            for entry in doc["budgets"]:
                scope = entry["scope"]
                target = check_target(scope, entry["target"])
                limit = Limit(scope, target, check_limit(entry["limit"]), check_warn(entry["warn"]), API)
                self.limits[(scope, target)] = limit
            for period, at in doc["lifted"].items():
                if not isinstance(period, str) or isinstance(at, bool) or not isinstance(at, int | float):
                    raise ValueError("a lifted period is not an id and a time")
                self.lifted[period] = float(at)
        except (ValueError, KeyError, TypeError, AttributeError, UsageError) as error:
            why = error.message if isinstance(error, UsageError) else error
            raise SetupError(f"{self.path} is not a list of budgets ({why}); fix or remove it") from None

    def save(self) -> None:
        paths.private_mkdir(self.path.parent)
        doc = {
            "schema": SCHEMA,
            "budgets": [
                {"scope": limit.scope, "target": limit.target, "limit": limit.limit, "warn": limit.warn}
                for limit in self.limits.values()
            ],
            "lifted": self.lifted,
        }
        files.replace(self.path, cjson.document(doc), durable=True)


@dataclass
class _Peer:
    """What a peer's ledger last said of one UTC day: its sums per folder in each currency."""

    day: str
    folders: dict[str, dict[str, float]]
    at: float


class Budgets:
    """Every budget this node holds, the spend each has reached, and what that says on the
    records of this node's sessions. ``cancel`` ends a headless session's turn (the runner's);
    ``ask`` reads a peer's ledger for the day's sums per folder (the mesh's; None: no swarm);
    ``marked`` is told of each session whose budget changed (its pane's options follow)."""

    def __init__(
        self,
        live: Live,
        usage: Usage,
        settings: Settings,
        store: Store,
        clock: Clock,
        *,
        cancel: Callable[[str], Awaitable[object]] | None = None,
        ask: Callable[[str, float], Awaitable[dict[str, Any] | None]] | None = None,
    ) -> None:
        self.live = live
        self.usage = usage
        self.settings = settings
        self.store = store
        self.clock = clock
        self.cancel = cancel
        self.ask = ask
        self.marked: Callable[[str], None] = lambda _key: None
        self._levels: dict[str, Crossing] = {}
        self._running: dict[str, float] = {}
        self._peers: dict[str, _Peer] = {}
        self._peer_spend: dict[str, object] = {}
        self._asking: dict[str, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[object]] = set()
        self._midnight: asyncio.TimerHandle | None = None

    @property
    def currency(self) -> str:
        return self.settings.currency

    async def __aenter__(self) -> Budgets:
        self.evaluate(None)
        self._arm()
        return self

    async def __aexit__(self, *_: object) -> None:
        if self._midnight is not None:
            self._midnight.cancel()
        for task in [*self._asking.values(), *self._tasks]:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _arm(self) -> None:
        """Look again at the next UTC midnight: a day's budgets end with it."""
        now = self.clock()
        day = time.gmtime(now)
        midnight = calendar.timegm((day.tm_year, day.tm_mon, day.tm_mday, 0, 0, 0)) + 86400
        loop = asyncio.get_running_loop()
        self._midnight = loop.call_later(max(0.0, midnight - now) + 0.5, self._new_day)

    def _new_day(self) -> None:
        self.evaluate(None)
        self._arm()

    # The budgets.

    def limits(self) -> list[Limit]:
        """Every budget in force: the config's, then the API's, which replace the config's for
        the same scope and target."""
        s = self.settings
        found: dict[tuple[str, str | None], Limit] = {}
        if s.day is not None:
            found[(DAY, None)] = Limit(DAY, None, s.day, s.warn, CONFIG)
        if s.session is not None:
            found[(SESSION, None)] = Limit(SESSION, None, s.session, s.warn, CONFIG)
        for folder, limit in s.folders.items():
            found[(FOLDER, folder)] = Limit(FOLDER, folder, limit, s.warn, CONFIG)
        found.update(self.store.limits)
        return list(found.values())

    def set(self, scope: str, target: object, limit: object, warn: object = None) -> Limit:
        """Set (or replace) the API's budget for ``scope`` and ``target``."""
        where = check_target(scope, target)
        if scope == SESSION and where is not None and self.live.roster.record(where) is None:
            raise TargetGone(f"no session {where!r}")
        made = Limit(
            scope,
            where,
            check_limit(limit),
            self.settings.warn if warn is None else check_warn(warn),
            API,
        )
        if (scope, where) not in self.store.limits and len(self.store.limits) >= MOST:
            raise UsageError(f"{MOST} budgets are set already; clear one first", field="scope")
        with self._saved():
            self.store.limits[(scope, where)] = made
        return made

    def clear(self, scope: str, target: object) -> None:
        """Forget the API's budget for ``scope`` and ``target`` (the config's, if any, stands)."""
        where = check_target(scope, target)
        if (scope, where) not in self.store.limits:
            raise TargetGone(f"no budget set through the API for {scope} {where or ''}".rstrip())
        with self._saved():
            del self.store.limits[(scope, where)]

    @contextlib.contextmanager
    def _saved(self) -> Iterator[None]:
        """The change the block makes to the store, saved, then every budget judged again; when
        the save fails, the store as it was before the block, so what the daemon enforces is
        never what the disk does not hold."""
        limits, lifted = dict(self.store.limits), dict(self.store.lifted)
        try:
            yield
            self.store.save()
        except BaseException:
            self.store.limits, self.store.lifted = limits, lifted
            raise
        self.evaluate(None)

    def lift(self, scope: str, target: object) -> dict[str, Any]:
        """Let prompts through a scope's budget until its period ends; what is lifted."""
        where = check_target(scope, target)
        if scope == SESSION and where is not None and self.live.roster.record(where) is None:
            raise TargetGone(f"no session {where!r}")
        period = _period(scope, where, day_of(self.clock()))
        with self._saved():
            self.store.lifted[period] = self.clock()
            self._forget_old_lifts()
        return {
            "scope": scope,
            "target": where,
            "period": period,
            "lifted_at": to_wire(self.store.lifted[period]),
        }

    def _forget_old_lifts(self) -> None:
        """A lift whose period is over (an ended session's, a past day's) is dropped."""
        today = day_of(self.clock())
        live = {r.session_key for r in self.live.roster.records() if r.liveness != records.ENDED}
        for period in list(self.store.lifted):
            kind, _, rest = period.partition(":")
            day = rest.split(":", 1)[0]
            if (kind == SESSION and rest not in live) or (kind in (FOLDER, DAY) and day != today):
                del self.store.lifted[period]

    # What is spent.

    def spent(self, limit: Limit, key: str | None, day: str) -> float:
        """What ``limit``'s scope has spent: session ``key``'s life, or ``day`` here and on
        every peer last heard, with the turns under way here."""
        currency = self.currency
        if limit.scope == SESSION:
            total = self.usage.sessions.get(key or "")
            own = total.spent(currency) if total is not None else 0.0
            return round(own + self._running.get(key or "", 0.0), DIGITS)
        folder = limit.target if limit.scope == FOLDER else None
        total = self.usage.folder_spent(day, currency, folder)
        for peer in self._peers.values():
            if peer.day == day:
                total += sum(
                    costs.get(currency, 0.0)
                    for name, costs in peer.folders.items()
                    if folder is None or within(name, folder)
                )
        for running_key, amount in self._running.items():
            record = self.live.roster.record(running_key)
            if record is not None and (folder is None or within(record.cwd or "", folder)):
                total += amount
        return round(total, DIGITS)

    def counted(self, record: Record, turn: Turn, spend: dict[str, Any]) -> None:
        """A turn of ``record``'s session was counted (its running estimate is over): put its
        ``spend`` on its record with the budget that turn makes of it, in one claim."""
        self._running.pop(record.session_key, None)
        self.evaluate(record.session_key, spend={record.session_key: spend})

    def running(self, key: str, turn: Turn) -> None:
        """A look at session ``key``'s turn under way: what it has cost so far."""
        cost = turn.cost[0] if turn.cost is not None and turn.cost[1] == self.currency else 0.0
        if cost <= self._running.get(key, 0.0):
            return
        self._running[key] = cost
        self.evaluate(key)

    def ended(self, key: str) -> None:
        self._running.pop(key, None)

    # Peers.

    def peer_changed(self, record: Record) -> None:
        """A peer's record changed; when its spend moved, ask that peer for its day's sums."""
        spent = (record.spend or {}).get("turns")
        key = record.session_key
        if self._peer_spend.get(key) == spent or self.ask is None:
            return
        self._peer_spend[key] = spent
        self.peer_heard(record.node_id)

    def peer_heard(self, node_id: str) -> None:
        """Ask ``node_id``'s ledger for the day's sums, once its spend has settled; an ask
        already waiting covers this one."""
        if self.ask is None or node_id in self._asking:
            return
        self._asking[node_id] = asyncio.ensure_future(self._ask_peer(node_id))

    async def _ask_peer(self, node_id: str) -> None:
        try:
            await asyncio.sleep(PEER_SETTLE)
            day = day_of(self.clock())
            start = calendar.timegm(time.strptime(day, "%Y-%m-%d"))
            assert self.ask is not None
            document = await self.ask(node_id, float(start))
        except Exception as error:  # a peer's silence costs its figures, never this node's loop
            log.info("the ledger of %s could not be read for its budgets: %s", node_id, error)
            document = None
        finally:
            self._asking.pop(node_id, None)
        folders = _folders(document)
        if folders is None:
            return
        self._peers[node_id] = _Peer(day, folders, self.clock())
        self.evaluate(None)

    def peer_gone(self, node_id: str) -> None:
        """A peer left the swarm (revoked, left): its spend no longer counts."""
        self._peers.pop(node_id, None)
        self.evaluate(None)

    # Judging.

    def evaluate(self, crossed_by: str | None, spend: dict[str, dict[str, Any]] | None = None) -> None:
        """Every budget's spend against its levels, and the budget each session of this node
        shows; the records that differ are claimed (with ``spend`` for the sessions it names).
        A level first reached now was crossed by ``crossed_by`` when that session is in its scope."""
        now = self.clock()
        today = day_of(now)
        live = [r for r in self.live.roster.records() if r.liveness != records.ENDED]
        levels: dict[str, Crossing] = {}
        shown: dict[str, list[tuple[Crossing, dict[str, Any]]]] = {r.session_key: [] for r in live}
        newly_exceeded: list[tuple[Limit, str | None]] = []
        for limit in self.limits():
            for key in self._keys(limit, live):
                period = _period(limit.scope, key if limit.scope == SESSION else limit.target, today)
                spent = self.spent(limit, key, today)
                level = (
                    EXCEEDED
                    if spent >= limit.limit
                    else WARNING
                    if spent >= limit.limit * limit.warn
                    else None
                )
                if level is None:
                    continue
                before = self._levels.get(period)
                if before is not None and _RANK[before.level] >= _RANK[level]:
                    crossing = before
                else:
                    scope_keys = self._in_scope(limit, key, live)
                    by = crossed_by if crossed_by in scope_keys else None
                    crossing = Crossing(level, now, by, _reason(limit, self.currency, spent, level, today))
                    if level == EXCEEDED and period not in self.store.lifted:
                        newly_exceeded.append((limit, key))
                levels[period] = crossing
                lifted = period in self.store.lifted
                value = _value(limit, key, period, crossing, self.currency, today, lifted)
                for member in self._in_scope(limit, key, live):
                    shown[member].append((crossing, value))
        self._levels = levels
        for record in live:
            choices = shown[record.session_key]
            best = max(choices, key=lambda pair: (_RANK[pair[1]["state"]], pair[0].at), default=None)
            value = best[1] if best is not None else None
            fields: dict[str, Any] = {}
            if spend is not None and record.session_key in spend:
                fields["spend"] = spend[record.session_key]
            if value != record.budget:
                fields["budget"] = value
            if fields:
                self.live.apply(Claim(LAUNCHER, now, session_key=record.session_key, fields=fields))
                self.marked(record.session_key)
        for limit, key in newly_exceeded:
            self._stop_turns(limit, key, live)

    def _keys(self, limit: Limit, live: list[Record]) -> Iterable[str | None]:
        """The scopes a budget judges: each live session a session budget applies to (the
        config's default applies to every one without a budget of its own), else one."""
        if limit.scope != SESSION:
            return (None,)
        if limit.target is not None:
            return (limit.target,) if any(r.session_key == limit.target for r in live) else ()
        own = {target for (scope, target) in self.store.limits if scope == SESSION}
        return [r.session_key for r in live if r.session_key not in own]

    @staticmethod
    def _in_scope(limit: Limit, key: str | None, live: list[Record]) -> list[str]:
        if limit.scope == SESSION:
            return [key] if key is not None else []
        if limit.scope == DAY:
            return [r.session_key for r in live]
        return [r.session_key for r in live if r.cwd and limit.target and within(r.cwd, limit.target)]

    def _stop_turns(self, limit: Limit, key: str | None, live: list[Record]) -> None:
        """A budget was just exceeded: cancel the turn of each headless session of its scope
        that is under way."""
        if self.cancel is None:
            return
        scope = set(self._in_scope(limit, key, live))
        for record in live:
            if record.session_key in scope and record.lane == "headless" and record.activity in records.BUSY:
                task = asyncio.ensure_future(self._cancel(record.session_key))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _cancel(self, key: str) -> None:
        assert self.cancel is not None
        try:
            await self.cancel(key)
        except Exception as error:
            log.info("the turn of %s over its budget could not be cancelled: %s", key, error)

    # What the faces read.

    def view(self) -> dict[str, Any]:
        """``GET /budgets``: every budget with what its scope has spent and its state, and the
        periods lifted."""
        today = day_of(self.clock())
        live = [r for r in self.live.roster.records() if r.liveness != records.ENDED]
        budgets = []
        for limit in self.limits():
            keys = list(self._keys(limit, live)) if limit.scope == SESSION else [None]
            for key in keys or [None]:  # a default that holds no session yet is shown once
                period = _period(limit.scope, key if limit.scope == SESSION else limit.target, today)
                crossing = self._levels.get(period)
                state = LIFTED if crossing is not None and period in self.store.lifted else None
                entry = limit.to_json(self.currency)
                if limit.scope == SESSION:
                    entry["session_key"] = key
                entry.update(
                    period=period,
                    day=today if limit.scope != SESSION else None,
                    spent=self.spent(limit, key, today),
                    state=state or (crossing.level if crossing is not None else None),
                    reason=crossing.reason if crossing is not None else None,
                )
                budgets.append(entry)
        return {
            "currency": self.currency,
            "warn": self.settings.warn,
            "day": today,
            "budgets": budgets,
            "lifted": [
                {"period": period, "at": to_wire(at)} for period, at in sorted(self.store.lifted.items())
            ],
            "peers": [
                {"node_id": node_id, "day": peer.day, "heard_at": to_wire(peer.at)}
                for node_id, peer in sorted(self._peers.items())
            ],
        }


def refusal(record: Record) -> OverBudget | None:
    """The refusal a prompt to ``record``'s session meets while a budget holds it, or None."""
    budget = record.budget or {}
    if budget.get("state") != EXCEEDED:
        return None
    name = record.name or record.session_key
    lift = f" ({budget['lift']} lets it through)" if budget.get("lift") else ""
    return OverBudget(f"{name}: {budget.get('reason')}{lift}", code=OVER_BUDGET, budget=budget)


def _period(scope: str, target: str | None, day: str) -> str:
    """A budget's period: a session's life, a folder's day, the swarm's day."""
    if scope == SESSION:
        return f"{SESSION}:{target}"
    if scope == FOLDER:
        return f"{FOLDER}:{day}:{target}"
    return f"{DAY}:{day}"


def _lift_command(limit: Limit, key: str | None) -> str:
    if limit.scope == SESSION:
        return f"rosterd budget lift session {key or ''}".rstrip()
    if limit.scope == FOLDER:
        return f"rosterd budget lift folder {limit.target}"
    return "rosterd budget lift day"


def _reason(limit: Limit, currency: str, spent: float, level: str, day: str) -> str:
    """What a person reads of a crossing: whose spend, how much of what, and what follows."""
    amount = f"{spent:.2f} {currency} of {limit.limit:.2f} {currency}"
    if limit.scope == SESSION:
        said = f"this session has spent {amount}, its budget"
    elif limit.scope == FOLDER:
        said = f"the sessions in {limit.target} have spent {amount} on {day} (UTC), the folder's budget"
    else:
        said = f"every node's sessions have spent {amount} on {day} (UTC), the day's budget"
    if level == WARNING:
        return f"{said}: {round(100 * spent / limit.limit)} % of it"
    return f"{said}: no prompt is sent until a person lifts it"


def _value(
    limit: Limit, key: str | None, period: str, crossing: Crossing, currency: str, day: str, lifted: bool
) -> dict[str, Any]:
    """The budget as a record carries it, with the command that lifts it."""
    return {
        "state": LIFTED if lifted else crossing.level,
        "scope": limit.scope,
        "folder": limit.target if limit.scope == FOLDER else None,
        "day": day if limit.scope != SESSION else None,
        "limit": limit.limit,
        "currency": currency,
        "reason": crossing.reason,
        "crossed_by": crossing.crossed_by,
        "crossing": f"{period}:{crossing.level}",
        "at": to_wire(crossing.at),
        "lift": _lift_command(limit, key),
    }


def _folders(document: dict[str, Any] | None) -> dict[str, dict[str, float]] | None:
    """A peer's day of sums per folder, as its ledger answers ``?by=folder``; None when it is
    not that."""
    if not isinstance(document, dict) or not isinstance(document.get("rows"), list):
        return None
    folders: dict[str, dict[str, float]] = {}
    for row in document["rows"]:
        if (
            not isinstance(row, dict)
            or not isinstance(row.get("folder"), str)
            or not isinstance(row.get("cost"), dict)
        ):
            continue
        costs = {
            currency: float(amount)
            for currency, amount in row["cost"].items()
            if isinstance(currency, str)
            and not isinstance(amount, bool)
            and isinstance(amount, int | float)
            and math.isfinite(amount)
            and amount >= 0
        }
        folders[row["folder"]] = costs
    return folders
