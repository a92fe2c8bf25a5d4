"""What a claim may hold: every field, its type and its range, declared once.

``POST /claim`` validates its body with :class:`ClaimBody`, the roster holds claims built in
code to the same model (:func:`roost.roster.claims.check`), and ``/openapi.json`` is generated
from it. A value outside these rules would otherwise reach the roster, and the roster
publishes what it holds: a start time past year 9999 or a lone surrogate in a name once failed
every snapshot and stream until a restart.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import ConfigDict, Field, ValidationInfo, WithJsonSchema, field_validator, model_validator

from roost.roster import precedence, records
from roost.roster.claims import ACTIVITY_ONLY
from roost.roster.times import from_wire
from roost.state import words as state_words
from roost.validation import JsonObject, Strict, integer, refuse, text, words

PID_MAX = 1 << 22
"""Linux's ``PID_MAX_LIMIT``: no kernel numbers a process higher, whatever ``pid_max`` says."""
TICKS_MAX = (1 << 63) - 1
COUNT_MAX = (1 << 63) - 1
FUTURE_SKEW = 86_400.0
"""Seconds past its arrival a claimed start time may be (clocks disagree), and no more: a
moment the wire format cannot write would break every reader of the roster."""
EVENT_LIMIT = 64
CLAIMABLE_WORDS = frozenset(records.ACTIVITIES) - {records.UNKNOWN} | frozenset(state_words.STATES)

Pid = integer(1, PID_MAX, f"a positive integer up to {PID_MAX}")
Ticks = integer(0, TICKS_MAX, f"a non-negative integer up to {TICKS_MAX}")


class Process(Strict):
    """A process as the kernel names it; ``[pid, start_ticks]`` is accepted as well, the shape
    older reporters send."""

    shape = "a process: {pid, start_ticks} or [pid, start_ticks]"

    pid: Pid
    start_ticks: Ticks

    @model_validator(mode="before")
    @classmethod
    def _pair(cls, value: Any) -> Any:
        if isinstance(value, list | tuple) and len(value) == 2:
            return {"pid": value[0], "start_ticks": value[1]}
        return value


class ClaimFields(Strict):
    """The record fields a claim may set; a null withdraws the sender's earlier value."""

    model_config = ConfigDict(extra="forbid")

    harness: text(64, one_line=True) | None = None
    session_id: text(256, one_line=True) | None = None
    name: text(200, one_line=True) | None = None
    cwd: text(4096) | None = None
    tty: text(256, one_line=True) | None = None
    mode: text(64, one_line=True) | None = None
    model: text(200, one_line=True) | None = None
    recap: text(65536) | None = None
    error_reason: text(1000) | None = None
    lane: words(records.LANES) | None = None
    liveness: words((records.LIVE, records.STALE, records.SUSPENDED)) | None = None
    permission_policy: words(records.PERMISSION_POLICIES) | None = None
    parent_session_key: text(256, least=1, one_line=True) | None = None
    tmux: JsonObject | None = None
    holder: JsonObject | None = None
    usage: JsonObject | None = None
    load: JsonObject | None = None
    plan: JsonObject | None = None
    pending: JsonObject | None = None


CLAIMABLE = frozenset(ClaimFields.model_fields)
ONE_LINE = frozenset(
    name for name, field in ClaimFields.model_fields.items() if "one line" in (field.description or "")
)
"""Text fields that are one line by contract: they reach terminals and tables as they are."""


class ClaimBody(Strict):
    """One observation; name the session by ``session_key`` or by ``pid`` and ``start_ticks``.
    ``started_at`` is checked against when the claim arrived (the validation context's
    ``received_at``). Built when the daemon starts, unlike the other models: every daemon takes
    claims, and the first one must not wait for its validator to be built."""

    model_config = ConfigDict(defer_build=False)

    source: words(precedence.SOURCES) = precedence.HOOK
    session_key: text(256, least=1, one_line=True) | None = None
    pid: Pid | None = None
    start_ticks: Ticks | None = None
    ancestors: list[Process] = Field(
        default=[], max_length=64, description="a list of up to 64 processes, nearest parent first"
    )
    activity: words(sorted(CLAIMABLE_WORDS)) | None = None
    event: text(EVENT_LIMIT, least=1, one_line=True, what="an event word") | None = None
    seq: integer(0, COUNT_MAX, "a non-negative integer") | None = None
    occupant_id: integer(1, COUNT_MAX, "a positive integer") | None = None
    fields: ClaimFields = Field(default=ClaimFields(), description="an object of record fields")
    ended: words(records.ENDED_REASONS) | None = None
    started_at: Annotated[
        float | None,
        WithJsonSchema(
            {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "number"}, {"type": "null"}]}
        ),
    ] = Field(
        default=None,
        description="when the session's process started (RFC 3339, or seconds since 1970): "
        "after 1970, at most a day after the claim arrives",
    )

    @field_validator("started_at", mode="before")
    @classmethod
    def _moment(cls, value: Any) -> Any:
        try:
            return from_wire(value)
        except ValueError:
            raise refuse("must be a date-time (ISO 8601) or seconds since 1970") from None

    @field_validator("started_at")
    @classmethod
    def _sane(cls, value: float | None, info: ValidationInfo) -> float | None:
        received = (info.context or {}).get("received_at", math.inf)
        if value is not None and not (math.isfinite(value) and 0 < value <= received + FUTURE_SKEW):
            raise refuse("must be a time after 1970 and no more than a day after the claim arrived")
        return value

    @model_validator(mode="after")
    def _whole(self) -> ClaimBody:
        if (self.pid is None) != (self.start_ticks is None):
            raise refuse("pid and start_ticks come together")
        if self.session_key is None and self.pid is None:
            raise refuse("a claim names a session_key or a process (pid and start_ticks)")
        if self.ancestors and self.pid is None:
            raise refuse("ancestors are only meaningful with the claim's own process")
        if self.ended is not None and self.activity is not None:
            raise refuse("a claim that ends a session carries no activity")
        if self.activity is None:
            for name in sorted(ACTIVITY_ONLY & self.fields.model_fields_set):
                raise refuse(f"fields.{name} travels only with an activity")
        return self
