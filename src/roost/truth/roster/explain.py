"""The truthfulness view of one session: which source set each field, what lost, what was refused.

``rosterd explain KEY`` prints this. It names sources, times, sequence numbers and events, and
never a field's value: values are in the record, and some (a recap, a pending request) are
text that must not be copied into another place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from roost.truth.roster import precedence
from roost.truth.roster.provenance import ACTIVITY, ACTIVITY_GROUP, Candidate, ClaimRef
from roost.truth.roster.times import to_wire

if TYPE_CHECKING:
    from roost.truth.roster.session import Session


def _origin(ref: ClaimRef) -> dict[str, Any]:
    return {"source": ref.source, "set_at": to_wire(ref.received_at), "claim": ref.to_json()}


def _fields(session: Session, now: float) -> tuple[dict[str, Any], dict[str, Any]]:
    counts = session.counts(now)
    winners: dict[str, Any] = {}
    shadowed: dict[str, Any] = {}
    occupant = _origin(session.occupant_claim)
    for name in ("pid", "start_ticks", "occupant_id"):
        winners[name] = occupant
    for name in sorted(session.provenance.names()):
        best: Candidate | None = session.provenance.winner(name, counts)
        targets = ACTIVITY_GROUP if name == ACTIVITY else (name,)
        if best is not None:
            for target in targets:
                winners[target] = _origin(best.ref)
        losers = session.provenance.losers(name, counts)
        if losers:
            shadowed[name] = [_origin(candidate.ref) for candidate in losers]
    if session.ending is not None:
        for name in ("liveness", "ended_at", "ended_reason"):
            winners[name] = _origin(session.ending.claim)
    return winners, shadowed


def _leases(session: Session, now: float) -> dict[str, Any]:
    leases = {}
    for source, lease in precedence.LEASES.items():
        heard = session.heard.get(source)
        if heard is not None:
            leases[source] = {
                "heard_at": to_wire(heard),
                "expires_at": to_wire(heard + lease),
                "expired": precedence.lease_expired(source, heard, now),
            }
    return leases


def view(session: Session, now: float) -> dict[str, Any]:
    """Explain one session as a JSON-ready dict."""
    record = session.record
    fields, shadowed = _fields(session, now)
    return {
        "session_key": session.key,
        "status_epoch": record.status_epoch if record else None,
        "occupant_id": session.occupant_id,
        "revision": record.revision if record else 0,
        "completed_revision": record.completed_revision if record else None,
        "sources": list(precedence.by_rank(session.sources)),
        "fields": fields,
        "shadowed": shadowed,
        "leases": _leases(session, now),
        "sequences": dict(sorted(session.last_seq.items(), key=lambda item: precedence.rank(item[0]))),
        "rejected": [
            {
                "at": to_wire(entry.at),
                "field": entry.field,
                "reason": entry.reason,
                "claim": entry.claim.to_json(),
            }
            for entry in session.rejected
        ],
        "overruled": [entry.to_json() for entry in session.overruled],
    }
