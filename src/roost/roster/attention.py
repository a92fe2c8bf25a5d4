"""The one rule above precedence: a claim that an agent waits on a person is checked against
what the person can see.

Agents fire no hook when a person declines or dismisses a dialog, so a hook's (or an
integration's) needs_attention would otherwise outrank every later screen reading and stand for
hours over an idle agent. When a lower source brings evidence that the dialog is gone (the
screen shows none any more, held long enough that a redraw is not taken for an answer), the
roster withdraws the higher sources' needs_attention and takes the evidence's claim instead.
Whoever decides that the evidence is good (the daemon's screen reader) says why in words, and
``explain`` keeps it beside the refusals. Nothing else ever ends a higher source's value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from roost.roster import precedence, records
from roost.roster.provenance import ACTIVITY, ClaimRef, Counts, Provenance
from roost.roster.times import to_wire

DIALOG_CLOSED = "dialog_closed"
"""The activity event of a session whose dialog left the screen with no word from its hook."""


@dataclass(frozen=True)
class Overruling:
    """One needs_attention that evidence ended: whose it was, what ended it, why and when."""

    at: float
    ended: ClaimRef
    by: ClaimRef
    evidence: str

    def to_json(self) -> dict[str, Any]:
        return {
            "at": to_wire(self.at),
            "source": self.ended.source,
            "ended": self.ended.to_json(),
            "by": self.by.to_json(),
            "evidence": self.evidence,
        }


def waiting_above(provenance: Provenance, source: str, counts: Counts) -> list[ClaimRef]:
    """The claims of sources above ``source`` whose needs_attention shows, or would show once
    the one above it is withdrawn: what must go for ``source``'s word to count. Empty when the
    session does not wait on a person by a higher source's word."""
    held = []
    for candidate in provenance.ranked(ACTIVITY, counts):
        if not precedence.outranks(candidate.ref.source, source):
            break
        if candidate.value.get("activity") != records.NEEDS_ATTENTION:
            break
        held.append(candidate.ref)
    return held
