"""What a claim may hold: every field, its type and its range, declared once.

``POST /claim`` validates its body with :class:`ClaimBody` (a gate's claim too), and
``/openapi.json`` is generated from it; the roster holds claims built in code to
:class:`RosterdClaim`, the same model widened by what only rosterd's own sources may say. A
value outside these rules would otherwise reach the roster, and the roster publishes what it
holds: a start time past year 9999 or a lone surrogate in a name once failed every snapshot
and stream until a restart.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from roost.base.procfs import PID_MAX
from roost.base.validation import JsonObject, Strict, integer, refuse, text, words
from roost.pane.state import words as state_words
from roost.truth.roster import pending, precedence, records
from roost.truth.roster.claims import ACTIVITY_ONLY
from roost.truth.roster.times import from_wire

TICKS_MAX = (1 << 63) - 1
COUNT_MAX = (1 << 63) - 1
FUTURE_SKEW = 86_400.0
"""Seconds past its arrival a claimed start time may be (clocks disagree), and no more: a
moment the wire format cannot write would break every reader of the roster."""
EVENT_LIMIT = 64
CLAIMABLE_WORDS = frozenset(records.ACTIVITIES) - {records.UNKNOWN} | frozenset(state_words.STATES)

ROSTERD_SOURCES = (precedence.LAUNCHER, precedence.ACP, precedence.INTEGRATION)
"""Sources no client may speak as. rosterd itself speaks for its launcher (its runner, and the
API's registration and naming, which build the claim with only the fields they allow) and for
the ACP stream it drives; an integration reports on the reports socket, whose peer credentials
prove which process it is. These sources outrank a hook's, so a client that could post as one
would set what no agent said and no later hook could undo: a headless session pinned at
needs_attention after its turn ended, until the daemon restarted."""


def _client_source(source: str) -> str:
    if source in ROSTERD_SOURCES:
        raise refuse(f"may not be {', '.join(ROSTERD_SOURCES)}: those are rosterd's own")
    return source


ClientSource = Annotated[
    words(precedence.SOURCES),
    AfterValidator(_client_source),
    Field(json_schema_extra={"not": {"enum": list(ROSTERD_SOURCES)}}),
]
"""A source a client may speak as: any but :data:`ROSTERD_SOURCES` (the refusal names every
source first, so a word that is none is told what the sources are)."""

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


def _asked(value: dict[str, Any]) -> dict[str, Any]:
    taken = pending.rosterd_only(value)
    if taken is not None:
        raise refuse(f"may not set {taken}: that is rosterd's to say")
    return value


Asked = Annotated[
    JsonObject,
    AfterValidator(_asked),
    Field(
        description=f"a JSON object: the request the session waits on ({', '.join(pending.ROSTERD_ONLY)} "
        "are rosterd's to say)",
        json_schema_extra={"propertyNames": {"not": {"enum": list(pending.ROSTERD_ONLY)}}},
    ),
]
"""A pending request as a client claims it."""


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
    pending: Asked | None = None


CURRENCY_MAX = 16
REASON_MAX = 1024


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= COUNT_MAX


def _amount(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < math.inf


def _line(value: object, limit: int) -> bool:
    return isinstance(value, str) and 0 < len(value) <= limit and value.isprintable()


def _spend(value: dict[str, Any]) -> dict[str, Any]:
    """A session's ``spend`` as a ledger counts it. Every face sums and prints these figures
    (the web app's rows and headings, ``rosterd list``'s cost), and a peer's record is as
    hostile as any body: a count that is not a whole number, an amount that is not a finite
    number, or a currency on two lines is refused here, with the record, and never reaches a
    page. What no face reads (``last``) passes as it is, and the object keeps its order."""
    if not _count(value.get("turns")) or not _count(value.get("unpriced", 0)):
        raise ValueError("spend: turns and unpriced must be whole numbers, not negative")
    tokens, cost = value.get("tokens", {}), value.get("cost", {})
    if not isinstance(tokens, dict) or not all(_line(k, 32) and _count(n) for k, n in tokens.items()):
        raise ValueError("spend: tokens must map names to whole numbers")
    if not isinstance(cost, dict) or not all(_line(k, CURRENCY_MAX) and _amount(n) for k, n in cost.items()):
        raise ValueError("spend: cost must map currencies to finite amounts, not negative")
    return value


def _budget(value: dict[str, Any]) -> dict[str, Any]:
    """The budget a session is near or over, checked as :func:`_spend` checks a spend: the
    words a face shows (``state``), what it is about (``scope``), the ``reason`` a person reads
    and the ``currency``; the rest passes as it is."""
    checks = (
        ("state", lambda v: v in records.BUDGET_STATES),
        ("scope", lambda v: v in records.BUDGET_SCOPES),
        ("reason", lambda v: isinstance(v, str) and len(v) <= REASON_MAX),
        ("currency", lambda v: _line(v, CURRENCY_MAX)),
    )
    for name, good in checks:
        if value.get(name) is not None and not good(value[name]):
            raise ValueError(f"budget: {name} is not what a budget says")
    return value


SpendObject = Annotated[JsonObject, AfterValidator(_spend)]
BudgetObject = Annotated[JsonObject, AfterValidator(_budget)]


class RosterdFields(ClaimFields):
    """The record fields rosterd's own sources may set: a pending request with its identity too
    (its id, whether rosterd can answer it), where a session handed to another node went, and
    what its ledger counted of the session's spend and makes of its budgets (no client may say
    what a session spent, or lift its budget by a claim)."""

    pending: JsonObject | None = None
    handed_to: JsonObject | None = None
    spend: SpendObject | None = None
    budget: BudgetObject | None = None


def _absent(name: str) -> dict[str, Any]:
    """A JSON Schema: ``name`` is missing or null."""
    return {"properties": {name: {"type": "null"}}}


def _given(name: str, kind: str) -> dict[str, Any]:
    """A JSON Schema: ``name`` is there and not null."""
    return {"required": [name], "properties": {name: {"type": kind}}}


WHOLE = (
    {
        "anyOf": [
            {
                "required": ["pid", "start_ticks"],
                "properties": {"pid": {"type": "integer"}, "start_ticks": {"type": "integer"}},
            },
            {
                "required": ["session_key"],
                "properties": {
                    "session_key": {"type": "string"},
                    "pid": {"type": "null"},
                    "start_ticks": {"type": "null"},
                    "ancestors": {"maxItems": 0},
                },
            },
        ],
        "description": "named by a session_key, or a process (pid and start_ticks, which come "
        "together); ancestors only with the claim's own process",
    },
    {
        "anyOf": [_absent("activity"), _absent("ended")],
        "description": "a claim that ends a session carries no activity",
    },
    {
        "anyOf": [
            _given("activity", "string"),
            {"properties": {"fields": {"properties": dict.fromkeys(sorted(ACTIVITY_ONLY), False)}}},
        ],
        "description": f"{' and '.join(sorted(ACTIVITY_ONLY))} travel only with an activity",
    },
)
""":meth:`ClaimBody._whole`'s rules, each as the JSON Schema the document states."""


def _whole_schema(schema: dict[str, Any]) -> None:
    schema.setdefault("allOf", []).extend(WHOLE)


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

    model_config = ConfigDict(defer_build=False, json_schema_extra=_whole_schema)

    source: ClientSource = precedence.HOOK
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
            {
                "anyOf": [
                    {"type": "string", "format": "date-time"},
                    {"type": "number", "exclusiveMinimum": 0},
                    {"type": "null"},
                ],
                "x-most-ahead-s": FUTURE_SKEW,
            }
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


class RosterdClaim(ClaimBody):
    """A claim rosterd's own sources build in code (the runner, the reports socket, the gate):
    every source, and every field of a pending request."""

    source: words(precedence.SOURCES) = precedence.HOOK
    fields: RosterdFields = Field(default=RosterdFields(), description="an object of record fields")
