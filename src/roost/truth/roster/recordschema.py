"""What a record from outside this node may hold: a peer's roster, checked as a claim is.

A node never writes another's roster, but it keeps each peer's records beside its own and
serves them on every face, so a record a peer sends is input like a claim: the fields a claim
may set are checked by the types of rosterd's own claims
(:class:`~roost.truth.roster.claimschema.RosterdFields`: a pending request keeps the id and the
``answerable`` its owner gave it, which a client's claim may not set), and the fields only a
roster writes (its key, revision, liveness, times) by the types here.
Fields this node does not know are ignored, as everywhere in the wire format: a newer peer's
record still reads. A record that fails is refused whole (:class:`~roost.base.validation.Invalid`),
never published in part.
"""

from __future__ import annotations

import math
import sys
from typing import Any

from pydantic import ConfigDict, Field, field_validator, model_validator

from roost.base.validation import Invalid, JsonObject, integer, refuse, text, validated, words
from roost.pane.state import words as state_words
from roost.truth.roster import precedence, records
from roost.truth.roster.claimschema import COUNT_MAX, EVENT_LIMIT, Pid, RosterdFields, Ticks
from roost.truth.roster.times import from_wire

Count = integer(0, COUNT_MAX, "a non-negative integer")
MOMENTS = ("started_at", "activity_at", "ended_at")


class RecordBody(RosterdFields):
    """One ``rosterd.snapshot.v1`` record as another node published it."""

    model_config = ConfigDict(extra="ignore")

    node: text(64, least=1, one_line=True)
    node_id: text(64, least=1, one_line=True)
    session_key: text(256, least=1, one_line=True)
    pid: Pid
    start_ticks: Ticks
    started_at: float
    sources: list[words(precedence.SOURCES)] = Field(default=[], max_length=len(precedence.SOURCES))
    activity: words(records.ACTIVITIES) = records.UNKNOWN
    activity_event: text(EVENT_LIMIT, least=1, one_line=True) | None = None
    activity_at: float | None = None
    activity_seq: Count = 0
    liveness: words(records.LIVENESS) = records.LIVE
    ended_at: float | None = None
    ended_reason: words(records.ENDED_REASONS) | None = None
    status_epoch: Count = 0
    occupant_id: Count = 0
    revision: Count = 0
    completed_revision: Count | None = None
    handed_to: JsonObject | None = None
    state: words(state_words.STATES) | None = None

    @field_validator(*MOMENTS, mode="before")
    @classmethod
    def _moment(cls, value: Any) -> Any:
        try:
            moment = from_wire(value)
        except ValueError:
            raise refuse("must be a date-time (RFC 3339)") from None
        if moment is not None and not (math.isfinite(moment) and moment > 0):
            raise refuse("must be a time after 1970")
        return moment

    @model_validator(mode="after")
    def _keyed(self) -> RecordBody:
        if not self.session_key.startswith(f"{self.node_id}:"):
            raise refuse("session_key must begin with the record's node_id")
        return self


SHARED = (
    "node",
    "node_id",
    "harness",
    "lane",
    "activity",
    "activity_event",
    "liveness",
    "state",
    "cwd",
    "mode",
    "model",
)
"""Fields whose few values a peer's records repeat: each is kept once (a swarm of 1,000 nodes of
50 sessions holds 50,000 records, each read afresh from JSON)."""


def from_peer(doc: object, node_id: str) -> records.Record:
    """``doc`` as a record of the node ``node_id``; :class:`~roost.base.validation.Invalid` when a
    field breaks its type or the record speaks for another node (a peer is the only writer of
    its own sessions, and of no one else's)."""
    body = validated(RecordBody, doc)
    if body.node_id != node_id:
        raise Invalid("node_id", f"node_id must be the sending node's ({node_id})")
    known = body.model_dump(exclude_unset=False)
    known["sources"] = tuple(known["sources"])
    for name in SHARED:
        if isinstance(known[name], str):
            known[name] = sys.intern(known[name])
    return records.Record(**{name: known[name] for name in records.FIELD_NAMES})
