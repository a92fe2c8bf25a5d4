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
from typing import TYPE_CHECKING, Any

from roost.pane.state import words
from roost.truth.roster import records

if TYPE_CHECKING:
    from roost.truth.roster.claimschema import ClaimBody

UNKNOWN_FIELD = "{} cannot be set by a claim"
ACTIVITY_ONLY = frozenset({"error_reason", "pending"})
"""Fields that describe an activity and so travel only with an activity word."""


class BadClaim(ValueError):
    """A claim that cannot be applied at all; the message is the reason given back to its sender,
    ``field`` the one it is about ("" for the whole claim)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


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
    def state_word(self) -> str | None:
        """The claimed state in roost's words (the pane badge's), whichever vocabulary the
        sender used: a record carries it beside the activity, so every face can say done or
        error where rosterd's activity says only idle."""
        return words.state_of(self.activity)

    @property
    def error_reason(self) -> str | None:
        """Why a turn failed, when the claim says it did: the internal ``error`` word keeps its
        reason here because rosterd's activity for it is plain ``idle``."""
        reason = self.fields.get("error_reason")
        if reason is None and self.activity == words.ERROR:
            return self.event or words.ERROR
        return reason


def _validated(payload: object, received_at: float, model: type[ClaimBody] | None = None) -> ClaimBody:
    # Loaded here, not above: a process (a test, a verb) may name a ProcessId or build a Claim
    # without ever checking one, and pydantic costs ~60 ms to import. The daemon loads the
    # schema when it starts (through the API), so no claim waits for it.
    from roost.base.validation import Invalid, validated
    from roost.truth.roster.claimschema import ClaimBody

    try:
        return validated(model or ClaimBody, payload, {"received_at": received_at}, UNKNOWN_FIELD)
    except Invalid as refused:
        raise BadClaim(refused.field, str(refused)) from None


def check(claim: Claim) -> str | None:
    """Why the claim is malformed, or None when it is well formed; the roster calls this first,
    so a claim built in code is held to the rules a claim read off the wire meets, widened only
    by what rosterd's own sources may say (:class:`~roost.truth.roster.claimschema.RosterdClaim`)."""
    from roost.truth.roster.claimschema import RosterdClaim

    if not isinstance(claim.received_at, int | float) or not math.isfinite(claim.received_at):
        return "received_at must be a finite number of seconds"
    process = claim.process
    payload = {
        "source": claim.source,
        "session_key": claim.session_key,
        "pid": None if process is None else process.pid,
        "start_ticks": None if process is None else process.start_ticks,
        "ancestors": [{"pid": a.pid, "start_ticks": a.start_ticks} for a in claim.ancestors],
        "activity": claim.activity,
        "event": claim.event,
        "seq": claim.seq,
        "occupant_id": claim.occupant_id,
        "fields": dict(claim.fields),
        "ended": claim.ended,
        "started_at": claim.started_at,
    }
    try:
        _validated(payload, claim.received_at, RosterdClaim)
    except BadClaim as refused:
        return str(refused)
    return None


def parse(payload: Mapping[str, Any], received_at: float, model: type[ClaimBody] | None = None) -> Claim:
    """A claim from its JSON body (``POST /claim``), stamped with when it arrived, held to
    :class:`ClaimBody` (what a client may send) or a narrower ``model`` (a gate's claim).

    Unknown top-level keys are ignored, as everywhere in rosterd's wire formats; unknown
    record fields are refused, because a claim for a field nobody reads is a sender's bug.
    """
    if not isinstance(payload, Mapping):
        raise BadClaim("", "a claim is a JSON object")
    return from_body(_validated(dict(payload), received_at, model), received_at)


def from_body(body: ClaimBody, received_at: float) -> Claim:
    """The claim a checked body says, stamped with when it arrived."""
    given = body.fields.model_fields_set
    return Claim(
        source=body.source,
        received_at=received_at,
        session_key=body.session_key,
        process=None if body.pid is None else ProcessId(body.pid, body.start_ticks or 0),
        ancestors=tuple(ProcessId(a.pid, a.start_ticks) for a in body.ancestors),
        activity=body.activity,
        event=body.event,
        seq=body.seq,
        occupant_id=body.occupant_id,
        fields=copy.deepcopy({name: getattr(body.fields, name) for name in given}),
        ended=body.ended,
        started_at=body.started_at,
    )
