"""A claim: one observation about one session, from one source, which the roster may refuse.

Detectors (hooks, the screen reader, the process scan, the runner) never set a session's
state; they send claims. A claim names its source, the session (by key, or by the process it
saw, with that process's ancestors so nested processes find their session), optionally an
activity word with the event behind it, a per-source sequence number, the occupant it
believes current, and the record fields it sets. The roster decides what to make of it.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from roost.roster import precedence, records
from roost.roster.times import from_wire
from roost.state import words
from roost.text import control

# Record fields a claim may set, with what each value must be.
_TEXT_LIMITS: Mapping[str, int] = {
    "harness": 64,
    "session_id": 256,
    "name": 200,
    "cwd": 4096,
    "tty": 256,
    "mode": 64,
    "recap": 65536,
    "error_reason": 1000,
}
_WORDS: Mapping[str, tuple[str, ...]] = {
    "lane": records.LANES,
    "liveness": (records.LIVE, records.STALE, records.SUSPENDED),
    "permission_policy": records.PERMISSION_POLICIES,
}
_OBJECTS = frozenset({"tmux", "holder", "usage", "load", "plan", "pending"})
CLAIMABLE = frozenset(_TEXT_LIMITS) | frozenset(_WORDS) | _OBJECTS

ACTIVITY_ONLY = frozenset({"error_reason", "pending"})
"""Fields that describe an activity and so travel only with an activity word."""

CLAIMABLE_WORDS = frozenset(records.ACTIVITIES) - {records.UNKNOWN} | frozenset(words.STATES)
_EVENT_LIMIT = 64

PID_MAX = 1 << 22
"""Linux's ``PID_MAX_LIMIT``: no kernel numbers a process higher, whatever ``pid_max`` says."""
TICKS_MAX = (1 << 63) - 1
FUTURE_SKEW = 86_400.0
"""Seconds past its arrival a claimed start time may be (clocks disagree), and no more: a
moment the wire format cannot write would break every reader of the roster."""
ONE_LINE = frozenset({"harness", "session_id", "name", "tty", "mode"})
"""Text fields that are one line by contract: they reach terminals and tables as they are."""
_DEPTH = 16


def _unwritable(value: object, depth: int = 0) -> str | None:
    """Why ``value`` cannot be written as strict JSON in UTF-8 (a lone surrogate, NaN or an
    infinity, nesting past a bound), or None. The roster publishes every value it holds, so
    one that cannot be written would fail every snapshot and stream until a restart."""
    if depth > _DEPTH:
        return f"nests deeper than {_DEPTH} levels"
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "holds text that is not valid Unicode (a lone surrogate)"
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return "holds a number that is not finite"
    if isinstance(value, dict):
        for key, item in value.items():
            problem = _unwritable(key, depth + 1) or _unwritable(item, depth + 1)
            if problem:
                return problem
    elif isinstance(value, list | tuple):
        for item in value:
            problem = _unwritable(item, depth + 1)
            if problem:
                return problem
    return None


class BadClaim(ValueError):
    """A claim that cannot be applied at all; the message is the reason given back to its sender."""


@dataclass(frozen=True)
class ProcessId:
    """A process as the kernel names it: a pid alone is reused, a pid with its start time is not."""

    pid: int
    start_ticks: int

    def to_json(self) -> dict[str, int]:
        return {"pid": self.pid, "start_ticks": self.start_ticks}


@dataclass(frozen=True)
class Claim:
    """One observation. ``fields`` holds only what the source means to set; a None value withdraws
    the source's earlier value for that field."""

    source: str
    received_at: float
    session_key: str | None = None
    process: ProcessId | None = None
    ancestors: tuple[ProcessId, ...] = ()
    activity: str | None = None
    event: str | None = None
    seq: int | None = None
    occupant_id: int | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)
    ended: str | None = None
    started_at: float | None = None

    @property
    def activity_word(self) -> str | None:
        """The claimed activity in rosterd's words, whichever vocabulary the sender used."""
        return None if self.activity is None else records.to_activity(self.activity)

    @property
    def error_reason(self) -> str | None:
        """Why a turn failed, when the claim says it did: the internal ``error`` word keeps its
        reason here because rosterd's activity for it is plain ``idle``."""
        reason = self.fields.get("error_reason")
        if reason is None and self.activity == words.ERROR:
            return self.event or words.ERROR
        return reason


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _process_problem(process: ProcessId) -> str | None:
    if not _is_int(process.pid) or not 0 < process.pid <= PID_MAX:
        return f"pid must be a positive integer up to {PID_MAX}, got {process.pid!r}"
    if not _is_int(process.start_ticks) or not 0 <= process.start_ticks <= TICKS_MAX:
        return f"start_ticks must be a non-negative integer up to {TICKS_MAX}, got {process.start_ticks!r}"
    return None


def _field_problem(name: str, value: object) -> str | None:
    if name not in CLAIMABLE:
        return f"field {name!r} cannot be set by a claim"
    if value is None:
        return None
    if name in _TEXT_LIMITS:
        if not isinstance(value, str):
            return f"field {name!r} must be text"
        if len(value) > _TEXT_LIMITS[name]:
            return f"field {name!r} is longer than {_TEXT_LIMITS[name]} characters"
        refused = control(value) if name in ONE_LINE else None
        if refused is not None:
            return f"field {name!r} is one line and may not hold control characters (U+{ord(refused):04X})"
    elif name in _WORDS:
        if value not in _WORDS[name]:
            return f"field {name!r} must be one of {', '.join(_WORDS[name])}, got {value!r}"
    elif not isinstance(value, dict):
        return f"field {name!r} must be an object"
    problem = _unwritable(value)  # text too: a lone surrogate is a str
    return f"field {name!r} {problem}" if problem else None


def check(claim: Claim) -> str | None:
    """Why the claim is malformed, or None when it is well formed; the roster calls this first,
    so a claim built in code is held to the same rules as one read off the wire."""
    if claim.source not in precedence.SOURCES:
        return f"unknown source {claim.source!r}; sources are {', '.join(precedence.SOURCES)}"
    if not isinstance(claim.received_at, int | float) or not math.isfinite(claim.received_at):
        return "received_at must be a finite number of seconds"
    if claim.started_at is not None and (
        not isinstance(claim.started_at, int | float)
        or not 0 < claim.started_at <= claim.received_at + FUTURE_SKEW
    ):
        return "started_at must be a time after 1970 and no more than a day after the claim arrived"
    if claim.session_key is None and claim.process is None:
        return "a claim names a session_key or a process (pid and start_ticks)"
    if claim.session_key is not None and (not isinstance(claim.session_key, str) or not claim.session_key):
        return "session_key must be non-empty text"
    if claim.ancestors and claim.process is None:
        return "ancestors are only meaningful with the claim's own process"
    for process in (claim.process, *claim.ancestors):
        problem = process and _process_problem(process)
        if problem:
            return problem
    if claim.activity is not None and (
        not isinstance(claim.activity, str) or claim.activity not in CLAIMABLE_WORDS
    ):
        return f"activity {claim.activity!r} cannot be claimed"
    if claim.event is not None and (
        not isinstance(claim.event, str)
        or not 0 < len(claim.event) <= _EVENT_LIMIT
        or control(claim.event) is not None
        or _unwritable(claim.event) is not None
    ):
        return f"event must be text of 1 to {_EVENT_LIMIT} characters"
    if claim.seq is not None and (not _is_int(claim.seq) or claim.seq < 0):
        return "seq must be a non-negative integer"
    if claim.occupant_id is not None and (not _is_int(claim.occupant_id) or claim.occupant_id < 1):
        return "occupant_id must be a positive integer"
    if claim.ended is not None:
        if claim.ended not in records.ENDED_REASONS:
            return f"ended must be one of {', '.join(records.ENDED_REASONS)}, got {claim.ended!r}"
        if claim.activity is not None:
            return "a claim that ends a session carries no activity"
    for name, value in claim.fields.items():
        problem = _field_problem(name, value)
        if problem:
            return problem
        if name in ACTIVITY_ONLY and claim.activity is None:
            return f"field {name!r} travels only with an activity"
    return None


def _process(value: object, what: str) -> ProcessId:
    if isinstance(value, Mapping):
        pid: Any = value.get("pid")
        ticks: Any = value.get("start_ticks")
        return ProcessId(pid, ticks)
    if isinstance(value, list | tuple) and len(value) == 2:
        return ProcessId(value[0], value[1])
    raise BadClaim(f"{what} must be {{pid, start_ticks}} or [pid, start_ticks]")


def parse(payload: Mapping[str, Any], received_at: float) -> Claim:
    """A claim from its JSON body (``POST /claim``), stamped with when it arrived.

    Unknown top-level keys are ignored, as everywhere in rosterd's wire formats; unknown
    record fields are refused, because a claim for a field nobody reads is a sender's bug.
    """
    if not isinstance(payload, Mapping):
        raise BadClaim("a claim is a JSON object")
    pid, ticks = payload.get("pid"), payload.get("start_ticks")
    if (pid is None) != (ticks is None):
        raise BadClaim("pid and start_ticks come together")
    ancestors = payload.get("ancestors")
    ancestors = [] if ancestors is None else ancestors
    if not isinstance(ancestors, list):
        raise BadClaim("ancestors must be a list, nearest parent first")
    claimed_fields = payload.get("fields")
    claimed_fields = {} if claimed_fields is None else claimed_fields
    if not isinstance(claimed_fields, Mapping):
        raise BadClaim("fields must be an object")
    try:
        started_at = from_wire(payload.get("started_at"))
    except ValueError as error:
        raise BadClaim(f"started_at: {error}") from None
    source: Any = payload.get("source")
    claim = Claim(
        source=source,
        received_at=received_at,
        session_key=payload.get("session_key"),
        process=None if pid is None else _process((pid, ticks), "pid and start_ticks"),
        ancestors=tuple(_process(item, "each ancestor") for item in ancestors),
        activity=payload.get("activity"),
        event=payload.get("event"),
        seq=payload.get("seq"),
        occupant_id=payload.get("occupant_id"),
        fields=copy.deepcopy(dict(claimed_fields)),
        ended=payload.get("ended"),
        started_at=started_at,
    )
    problem = check(claim)
    if problem:
        raise BadClaim(problem)
    return claim
