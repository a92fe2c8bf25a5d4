"""One session's record in the ``rosterd.snapshot.v1`` shape, and the words its fields use.

A record is what every client reads, so it is versioned and additive: it is written with every
field present (``null`` when nobody knows), and read back ignoring fields it does not know.
Records are immutable values; the roster publishes a new one for every revision.

Session key: ``<node_id>:<pid>:<start_ticks>`` of the process the session was first seen as.
The node id comes from the node's persistent key and the other two from the kernel, so a
daemon that restarts and rebuilds its roster from a process scan derives the same key for the
same session, and a reused pid (different start time) can never inherit an old key. The key
stays with the session when a new occupant process replaces the first one; ``pid`` and
``start_ticks`` in the record always name the current occupant.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from roost.pane.state import words
from roost.truth.roster.times import from_wire, to_wire

SCHEMA = "rosterd.snapshot.v1"

ACTIVE, IDLE, NEEDS_ATTENTION, UNKNOWN = words.ACTIVE, words.IDLE, words.NEEDS_ATTENTION, words.UNKNOWN
ACTIVITIES = (ACTIVE, IDLE, NEEDS_ATTENTION, UNKNOWN)
BUSY = (ACTIVE, NEEDS_ATTENTION)

LIVE, STALE, SUSPENDED, ENDED = "live", "stale", "suspended", "ended"
LIVENESS = (LIVE, STALE, SUSPENDED, ENDED)

ENDED_REASONS = ("exit", "crash", "reboot", "killed", "expired", "handed_off")
LANES = ("headless", "interactive")
PERMISSION_POLICIES = ("auto", "attention")
BUDGET_SCOPES = ("session", "folder", "day")
"""What a budget on a record's ``budget`` is about (``roost.services.ledger.budgets``)."""
BUDGET_STATES = ("warning", "exceeded", "lifted")
"""Where a record's ``budget`` stands: near its limit, past it, or lifted by a person."""

ACTIVITY_OF_STATE: Mapping[str, str] = words.ACTIVITY_OF_STATE
"""The internal words a pane badge uses, as rosterd activity (defined in roost.pane.state.words)."""

TIMESTAMPS = frozenset({"started_at", "activity_at", "ended_at"})


def session_key(node_id: str, pid: int, start_ticks: int) -> str:
    """The key a session keeps for life; see the module docstring for why it is stable."""
    return f"{node_id}:{pid}:{start_ticks}"


def to_activity(word: str) -> str:
    """An activity word as is, or an internal state word in rosterd's vocabulary."""
    if word in ACTIVITIES:
        return word
    return ACTIVITY_OF_STATE[word]


@dataclass(frozen=True, slots=True)
class Record:
    """A session as published. Field order is the order clients see on the wire."""

    node: str
    node_id: str
    session_key: str
    pid: int
    start_ticks: int
    started_at: float
    harness: str | None = None
    session_id: str | None = None
    lane: str | None = None
    sources: tuple[str, ...] = ()
    name: str | None = None
    activity: str = UNKNOWN
    activity_event: str | None = None
    activity_at: float | None = None
    activity_seq: int = 0
    error_reason: str | None = None
    parent_session_key: str | None = None
    cwd: str | None = None
    tty: str | None = None
    tmux: dict[str, Any] | None = None
    holder: dict[str, Any] | None = None
    liveness: str = LIVE
    ended_at: float | None = None
    ended_reason: str | None = None
    status_epoch: int = 0
    occupant_id: int = 0
    revision: int = 0
    completed_revision: int | None = None
    usage: dict[str, Any] | None = None
    load: dict[str, Any] | None = None
    mode: str | None = None
    plan: dict[str, Any] | None = None
    permission_policy: str | None = None
    recap: str | None = None
    pending: dict[str, Any] | None = None
    model: str | None = None
    handed_to: dict[str, Any] | None = None
    """Where a headless session ended ``handed_off`` went: ``node``, ``node_id``, ``session_key``."""
    state: str | None = None
    """The activity in roost's words (``working``, ``blocked``, ``done``, ``idle``, ``error``:
    what a pane's badge says), null while the activity is ``unknown``. It tells apart what
    ``idle`` covers (a turn just done, an agent at rest, a failed turn), so every face can say
    it in one set of words (``roost.pane.state.words.HUMAN``)."""
    spend: dict[str, Any] | None = None
    """What the session's turns have used and cost, as rosterd counted them (its ledger's
    word, never a client's): ``turns``, ``tokens``, ``cost`` per currency, ``unpriced`` (turns
    whose cost is unknown) and the ``last`` turn; null before its first turn is counted."""
    budget: dict[str, Any] | None = None
    """The budget this session is near or over, as rosterd holds it (its ledger's word):
    ``state`` (``warning``, ``exceeded``, ``lifted``), ``scope``, ``limit``, ``spent``,
    ``reason``…; null while every budget that applies is below its warning level."""

    def replace(self, **changes: Any) -> Record:
        """A copy with some fields changed: records are values, never edited in place."""
        return replace(self, **changes)


FIELD_NAMES = tuple(f.name for f in fields(Record))
_REQUIRED = ("node", "node_id", "session_key", "pid", "start_ticks", "started_at")


def to_json(record: Record) -> dict[str, Any]:
    """Every field, in order, timestamps as RFC 3339; safe to hand to ``json.dumps``. What
    ``dataclasses.asdict`` gives, in a sixth of its time (~13 µs a record where asdict, which
    deep-copies every value it does not know, took ~74): a swarm of a thousand nodes holds
    fifty thousand records. Its nested documents are copies, so one edited never edits the record."""
    doc = {name: _copied(getattr(record, name)) for name in FIELD_NAMES}
    doc["sources"] = list(record.sources)
    for name in TIMESTAMPS:
        doc[name] = to_wire(doc[name])
    return doc


def _copied(value: Any) -> Any:
    """A field's value as :func:`to_json` gives it: JSON's own shapes copied all the way down."""
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(map(_copied, value))
    return value


def answer(value: Any) -> dict[str, Any]:
    """An action's answer (a dataclass of plain fields and records) as every face sends it:
    each field as it is, a record as :func:`to_json` writes one. The API's model of the answer
    is derived from the same dataclass, so the value, the document and the wire are one shape."""
    return {
        f.name: to_json(v) if isinstance(v := getattr(value, f.name), Record) else v for f in fields(value)
    }


def from_json(doc: Mapping[str, Any]) -> Record:
    """Read a record a newer or older writer produced: unknown fields are ignored, missing ones
    are null. Raises ValueError naming the field when a field the key depends on is absent."""
    missing = [name for name in _REQUIRED if doc.get(name) is None]
    if missing:
        raise ValueError(f"record lacks {', '.join(missing)}")
    known = {name: copy.deepcopy(doc[name]) for name in FIELD_NAMES if doc.get(name) is not None}
    for name in TIMESTAMPS & known.keys():
        known[name] = from_wire(known[name])
    if "sources" in known:
        known["sources"] = tuple(known["sources"])
    return Record(**known)


def snapshot_document(
    node: str, node_id: str, status_epoch: int, seq: int, generated_at: float, records: list[Record]
) -> dict[str, Any]:
    """A node's whole roster as one document: what ``GET /snapshot`` and each SSE frame carry."""
    return {
        "schema": SCHEMA,
        "node": node,
        "node_id": node_id,
        "status_epoch": status_epoch,
        "seq": seq,
        "generated_at": to_wire(generated_at),
        "records": [to_json(record) for record in records],
    }
