"""Where each field of one session came from: every source's latest value, and which one counts.

The roster keeps what each source last said about each field, not only the winning value,
so that when a leased source falls silent the next source's value shows through at once and
``explain`` can say which source set a field and which lost to it. Activity is kept as one
group (the word, its event and time, an error reason, a pending request, the state in roost's
words): mixing a hook's word
with the screen's event would describe a moment nobody observed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from roost.truth.roster import precedence
from roost.truth.roster.claims import Claim
from roost.truth.roster.times import to_wire

ACTIVITY = "activity"
"""The provenance name of the activity group."""
ACTIVITY_GROUP = ("activity", "activity_event", "activity_at", "error_reason", "pending", "state")
"""Record fields that the activity group sets together."""

Counts = Callable[[str], bool]
"""Whether a source's values count right now (False once its lease has expired)."""


@dataclass(frozen=True)
class ClaimRef:
    """What is remembered of a claim for ``explain``: never its field values, which may hold a
    recap or a pending request's summary, so explain can be shown anywhere."""

    source: str
    seq: int | None
    event: str | None
    activity: str | None
    received_at: float

    @classmethod
    def of(cls, claim: Claim) -> ClaimRef:
        return cls(claim.source, claim.seq, claim.event, claim.activity, claim.received_at)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "seq": self.seq,
            "event": self.event,
            "activity": self.activity,
            "received_at": to_wire(self.received_at),
        }


@dataclass(frozen=True, eq=False)
class Candidate:
    """One source's latest value for one field. Compared by identity: two claims saying the same
    thing are still two observations."""

    value: Any
    ref: ClaimRef


class Provenance:
    """Every source's latest value for every field of one session."""

    def __init__(self) -> None:
        self._offers: dict[str, dict[str, Candidate]] = {}

    def offer(self, name: str, value: Any, ref: ClaimRef, counts: Counts) -> str | None:
        """Remember a source's value; say why it does not show when a higher source holds one.

        The value is kept even when it loses: it is what shows once the higher source's lease
        expires. Withdrawing (None) never loses, there is nothing to overwrite.
        """
        holder = self.winner(name, counts)
        self._offers.setdefault(name, {})[ref.source] = Candidate(value, ref)
        if value is not None and holder is not None and precedence.outranks(holder.ref.source, ref.source):
            return f"{name}: {holder.ref.source} set it, which outranks {ref.source}"
        return None

    def said(self, name: str, source: str) -> Candidate | None:
        """What ``source`` last said of ``name``, whether or not it shows."""
        return self._offers.get(name, {}).get(source)

    def ranked(self, name: str, counts: Counts) -> list[Candidate]:
        """Every counting source's non-null value, highest source first: the winner, then what
        would show if it were withdrawn, and so on."""
        offers = self._offers.get(name, {})
        ranked = (offers[source] for source in precedence.SOURCES if source in offers and counts(source))
        return [candidate for candidate in ranked if candidate.value is not None]

    def winner(self, name: str, counts: Counts) -> Candidate | None:
        """The highest counting source's non-null value: lower sources fill nulls, never more."""
        offers = self._offers.get(name, {})
        for source in precedence.SOURCES:
            candidate = offers.get(source)
            if candidate is not None and candidate.value is not None and counts(source):
                return candidate
        return None

    def losers(self, name: str, counts: Counts) -> list[Candidate]:
        """Non-null values that do not show, highest source first: what explain calls shadowed."""
        best = self.winner(name, counts)
        offers = self._offers.get(name, {})
        return [
            offers[source]
            for source in precedence.SOURCES
            if source in offers and offers[source] is not best and offers[source].value is not None
        ]

    def withdraw(self, name: str, source: str) -> None:
        """Forget ``source``'s value for ``name``, so the next source's shows through."""
        self._offers.get(name, {}).pop(source, None)

    def names(self) -> list[str]:
        return list(self._offers)

    def forget(self, names: Iterable[str]) -> None:
        """Drop every source's values for these fields: they described a process that is gone."""
        for name in names:
            self._offers.pop(name, None)
