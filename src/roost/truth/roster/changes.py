"""The changes stream: what happened to a session, named, numbered and kept for a while.

A client learns what happened instead of diffing frames itself. Each change carries one
global, monotonic ``seq`` (per status epoch) and the record after the change. The last few
changes are kept in a ring so a client that drops its connection can ask for everything after
the last ``seq`` it saw; when that ``seq`` has fallen out of the ring (or comes from another
epoch) it gets one ``snapshot`` change instead and starts over from there. Names:

- ``session_started``: a session key seen for the first time.
- ``session_ended``: liveness became ended; ``record.ended_reason`` says why.
- ``session_suspended``: the runner stopped the session's process on purpose, keeping it.
- ``attention``: an accepted claim leaves the session needing a human: once per wait, so it is
  the one to notify on. A wait is its pending request: a claim that says the same request
  again (its id unchanged: a notification about the dialog its hook already reported, the
  pane's badge read back, a gate giving up on it) is an ``updated``, not a second wait. A
  claim that needs a human with no request to name is a new wait every time. A budget is the
  other thing a person is told of this way: the session whose turn took a budget past its
  warning level or its limit (its record's ``budget`` names it in ``crossed_by``) has an
  ``attention`` change once for that crossing (``budget.crossing``), whatever its activity;
  the other sessions the same budget holds are ``updated``.
- ``attention_cleared``: the session no longer needs a human and has not ended.
- ``activity``: any other change of activity.
- ``renamed``: the display name changed.
- ``updated``: nothing above, but something a client shows beside the activity did: the plan,
  mode, usage or recap (a headless session's plan moves on mid-turn, with no new activity),
  its lane or pane, or a wait already announced was said again.
- ``snapshot``: the whole roster, for a new subscriber or one that fell behind.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from roost.truth.roster import records
from roost.truth.roster.records import Record
from roost.truth.roster.times import to_wire

SNAPSHOT = "snapshot"
SESSION_STARTED = "session_started"
SESSION_ENDED = "session_ended"
SESSION_SUSPENDED = "session_suspended"
ATTENTION = "attention"
ATTENTION_CLEARED = "attention_cleared"
ACTIVITY = "activity"
RENAMED = "renamed"
UPDATED = "updated"
EVENTS = (
    SNAPSHOT,
    SESSION_STARTED,
    SESSION_ENDED,
    SESSION_SUSPENDED,
    ATTENTION,
    ATTENTION_CLEARED,
    ACTIVITY,
    RENAMED,
    UPDATED,
)
NODE = "node"
NODE_LEFT = "node_left"
SWARM_EVENTS = (*EVENTS, NODE, NODE_LEFT)
"""The swarm's changes (``GET /swarm/changes``, webhooks): a session's, and how a node stands
(a peer heard, lost or back; a peer's records gone from the union)."""
SHOWN = ("plan", "mode", "usage", "recap", "lane", "tmux", "spend", "budget")
"""Fields whose change alone is an ``updated`` change: what a client draws beside the activity
(what it spent and its budget among them: a peer hears of another node's spend so), and where
the session runs (an agent's hook may speak before the scan has found its pane: the
pane it then learns is news to every client, and to every peer, which hears only changes)."""

RING_SIZE = 1024
"""Changes kept for ``?since=``: minutes of a busy node's traffic, a few hundred KB at most."""


def transitions(old: Record | None, new: Record) -> list[str]:
    """The change names between two consecutive records of one session, in the order sent."""
    if old is None:
        if new.liveness == records.ENDED:
            return []
        started = [SESSION_STARTED]
        return [*started, ATTENTION] if new.activity == records.NEEDS_ATTENTION else started
    names = []
    if new.liveness != old.liveness:
        if new.liveness == records.ENDED:
            return [SESSION_ENDED]
        if new.liveness == records.SUSPENDED:
            names.append(SESSION_SUSPENDED)
    if new.name != old.name:
        names.append(RENAMED)
    claimed = new.activity_seq != old.activity_seq or new.activity != old.activity
    needs = new.activity == records.NEEDS_ATTENTION
    repeated = claimed and needs and same_wait(old, new)
    if claimed and needs and not repeated:
        names.append(ATTENTION)
    elif old.activity == records.NEEDS_ATTENTION and not needs:
        names.append(ATTENTION_CLEARED)
    elif claimed and not repeated:
        names.append(ACTIVITY)
    if budget_crossed(old, new) and ATTENTION not in names:
        names.append(ATTENTION)
    if not names and (repeated or any(getattr(new, name) != getattr(old, name) for name in SHOWN)):
        names.append(UPDATED)
    return names


BUDGET_LEVELS = ("warning", "exceeded")


def budget_crossed(old: Record | None, new: Record) -> bool:
    """Whether ``new`` is the record on which this session's own turn took a budget past a
    level, for the first time: the budget names it as what crossed it, and the crossing is new."""
    budget = new.budget or {}
    if budget.get("state") not in BUDGET_LEVELS or budget.get("crossed_by") != new.session_key:
        return False
    return budget.get("crossing") != ((old.budget or {}).get("crossing") if old is not None else None)


def same_wait(old: Record, new: Record) -> bool:
    """Whether both records wait on a person for one and the same request: its id unchanged."""
    waits = [
        (record.pending or {}).get("id") if record.activity == records.NEEDS_ATTENTION else None
        for record in (old, new)
    ]
    return waits[0] is not None and waits[0] == waits[1]


@dataclass(frozen=True)
class Change:
    """One entry of the stream. ``record`` is the session after the change; a ``snapshot``
    change carries the whole roster document instead."""

    seq: int
    event: str
    at: float
    status_epoch: int
    record: Record | None = None
    snapshot: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "seq": self.seq,
            "event": self.event,
            "at": to_wire(self.at),
            "status_epoch": self.status_epoch,
        }
        if self.snapshot is not None:
            doc["snapshot"] = self.snapshot
        if self.record is not None:
            doc["session_key"] = self.record.session_key
            doc["record"] = records.to_json(self.record)
        return doc


class ChangeLog:
    """Numbers changes and keeps the newest ``size`` of them for replay."""

    def __init__(self, status_epoch: int, size: int = RING_SIZE) -> None:
        if size < 1:
            raise ValueError("the change ring holds at least one change")
        self._epoch = status_epoch
        self._ring: deque[Change] = deque(maxlen=size)
        self._head = 0

    @property
    def head(self) -> int:
        """The seq of the newest change; 0 before the first."""
        return self._head

    def append(self, event: str, at: float, record: Record) -> Change:
        self._head += 1
        change = Change(self._head, event, at, self._epoch, record)
        self._ring.append(change)
        return change

    def since(self, seq: int) -> tuple[Change, ...] | None:
        """Every change after ``seq``, or None when they cannot all be given (the oldest fell out
        of the ring, or ``seq`` is ahead of this log and so belongs to another epoch)."""
        if seq > self._head:
            return None
        oldest = self._ring[0].seq if self._ring else self._head + 1
        if seq < oldest - 1:
            return None
        return tuple(change for change in self._ring if change.seq > seq)
