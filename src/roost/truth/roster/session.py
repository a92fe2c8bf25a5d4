"""One session as the roster holds it: its occupant, what each source said, and its counters.

The roster decides which session a claim is about; a Session then applies it: remembers the
values by source, keeps per-source sequences and lease times, and turns all of it into the
next published record, bumping the revision only when something a client can see changed.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from roost.truth.roster import attention, overrules, pending, precedence, records
from roost.truth.roster.attention import Overruling
from roost.truth.roster.claims import ACTIVITY_ONLY, Claim, ProcessId
from roost.truth.roster.provenance import ACTIVITY, ClaimRef, Counts, Provenance
from roost.truth.roster.records import Record

OCCUPANT_FIELDS = (ACTIVITY, "session_id", "harness", "usage", "load", "mode", "model", "plan", "recap")
"""What describes the process rather than the session; forgotten when a new occupant arrives.
The name, cwd, terminal handles, lane and policy belong to the session and stay."""

OVERRULINGS_KEPT = 8
"""Higher sources' words the screen ended (a needs_attention, a hook's done) remembered per
session for ``explain``."""
PREVIOUS_KEPT = 16
"""Former occupants remembered, so a late claim from one is refused instead of taking over."""


@dataclass(frozen=True)
class Rejection:
    """A claim (or one field of it) the roster did not take, and why."""

    at: float
    reason: str
    claim: ClaimRef
    field: str | None = None


@dataclass(frozen=True)
class Ending:
    reason: str
    at: float
    claim: ClaimRef


class Session:
    """Mutable state of one session; only the roster touches it."""

    def __init__(
        self,
        key: str,
        process: ProcessId,
        occupant_id: int,
        started_at: float,
        creator: ClaimRef,
        rejected_keep: int,
    ) -> None:
        self.key = key
        self.process = process
        self.occupant_id = occupant_id
        self.occupant_claim = creator
        self.started_at = started_at
        self.provenance = Provenance()
        self.members: set[ProcessId] = set()
        self.previous: deque[ProcessId] = deque(maxlen=PREVIOUS_KEPT)
        self.last_seq: dict[str, int] = {}
        self.heard: dict[str, float] = {}
        self.sources: set[str] = set()
        self.rejected: deque[Rejection] = deque(maxlen=rejected_keep)
        self.overruled: deque[Overruling] = deque(maxlen=OVERRULINGS_KEPT)
        self._ended_words: dict[str, str] = {}
        """Per source, the state a screen rule overruled, until that source says another: the
        same word again is about the turn already overruled (a late copy of it), not news."""
        self.ending: Ending | None = None
        self.record: Record | None = None
        self._revision = 0
        self._activity_seq = 0
        self._activity_winner: object = None
        self._completed_revision: int | None = None
        self._busy = False

    @property
    def ended(self) -> bool:
        return self.ending is not None

    def counts(self, now: float) -> Counts:
        """Which sources' values count at ``now``: all but a leased source gone silent."""
        return lambda source: not precedence.lease_expired(source, self.heard.get(source), now)

    def reject(self, at: float, reason: str, claim: Claim, field: str | None = None) -> None:
        self.rejected.append(Rejection(at, reason, ClaimRef.of(claim), field))

    def sequence(self, claim: Claim, now: float) -> str | None:
        """Admit the claim in its source's order; refuse a replay or a late arrival."""
        problem = precedence.out_of_order(claim.source, self.last_seq.get(claim.source), claim.seq)
        if problem:
            return problem
        if claim.seq is not None:
            self.last_seq[claim.source] = claim.seq
        self.heard[claim.source] = now
        self.sources.add(claim.source)
        return None

    def replace_occupant(self, process: ProcessId, occupant_id: int, claim: Claim) -> None:
        """A new process now occupies the session: forget what described the old one, including
        every source's sequence, because the new process numbers its claims afresh."""
        self.previous.append(self.process)
        self.process = process
        self.occupant_id = occupant_id
        self.occupant_claim = ClaimRef.of(claim)
        self.members.clear()
        self.provenance.forget(OCCUPANT_FIELDS)
        self.last_seq.clear()
        self.heard.clear()
        self._completed_revision = None
        self._busy = False
        self._ended_words.clear()

    def offer(self, claim: Claim, now: float, extra: dict[str, Any] | None = None) -> list[str]:
        """Remember what the claim says; return why each field it set does not show."""
        ref, counts = ClaimRef.of(claim), self.counts(now)
        offers = {name: value for name, value in claim.fields.items() if name not in ACTIVITY_ONLY}
        offers.update(extra or {})
        shadowed = []
        if claim.activity is not None and self._overruled_again(claim):
            reason = f"{ACTIVITY}: {claim.source} said {claim.state_word} again, which the screen overruled"
            self.rejected.append(Rejection(now, reason, ref, ACTIVITY))
            shadowed.append(reason)
        elif claim.activity is not None:
            offers[ACTIVITY] = {
                "activity": claim.activity_word,
                "activity_event": claim.event,
                "activity_at": claim.received_at,
                "error_reason": claim.error_reason,
                "pending": self._pending(claim),
                "state": claim.state_word,
            }
        for name, value in offers.items():
            reason = self.provenance.offer(name, value, ref, counts)
            if reason:
                shadowed.append(reason)
                self.rejected.append(Rejection(now, reason, ref, name))
        return shadowed

    def _overruled_again(self, claim: Claim) -> bool:
        """Whether ``claim`` says again the state the screen overruled of its source, with
        nothing else said between (a late copy of the word: a scan that read the hook's badge
        before the screen rewrote it). Any other word of the source ends that."""
        ended = self._ended_words.get(claim.source)
        if ended is None:
            return False
        if claim.state_word == ended:
            return True
        del self._ended_words[claim.source]
        return False

    def _pending(self, claim: Claim) -> dict[str, Any] | None:
        """The claim's pending request in the one shape (:mod:`roost.truth.roster.pending`), keeping
        the identity of the request its source already reported open."""
        given = claim.fields.get("pending")
        if given is None or claim.activity_word != records.NEEDS_ATTENTION:
            return None
        before = self.provenance.said(ACTIVITY, claim.source)
        earlier = before.value if before is not None else None
        still = earlier is not None and earlier.get("activity") == records.NEEDS_ATTENTION
        return pending.normalized(given, earlier.get("pending") if still else None, claim.received_at)

    def overrule(self, claim: Claim, now: float, evidence: str, states: frozenset[str] | None = None) -> bool:
        """Withdraw every higher source's needs_attention that stands in the way of ``claim``
        (see :mod:`roost.truth.roster.attention`), or with ``states``, every higher source's
        word that says one of them (:mod:`roost.truth.roster.overrules`); False when there is
        none, and nothing changes."""
        counts = self.counts(now)
        if states is None:
            held = attention.waiting_above(self.provenance, claim.source, counts)
        else:
            held = overrules.saying_above(self.provenance, claim.source, counts, states)
            for ref in held:
                said = self.provenance.said(ACTIVITY, ref.source)
                if said is not None:
                    self._ended_words[ref.source] = said.value["state"]
        by = ClaimRef.of(claim)
        for ref in held:
            self.provenance.withdraw(ACTIVITY, ref.source)
            self.overruled.append(Overruling(now, ref, by, evidence))
        return bool(held)

    def end(self, reason: str, claim: Claim) -> None:
        self.ending = Ending(reason, claim.received_at, ClaimRef.of(claim))

    def publish(
        self, node: str, node_id: str, status_epoch: int, now: float
    ) -> tuple[Record | None, Record] | None:
        """The next record, if it differs from the last one published: (before, after)."""
        counts = self.counts(now)
        group = self.provenance.winner(ACTIVITY, counts)
        activity_seq = self._activity_seq + (group is not self._activity_winner)
        values = {
            name: winner.value
            for name in self.provenance.names()
            if name != ACTIVITY and (winner := self.provenance.winner(name, counts)) is not None
        }
        if group is not None:
            values.update(group.value)
        if self.ending is not None:
            values.update(liveness=records.ENDED, ended_at=self.ending.at, ended_reason=self.ending.reason)
        candidate = Record(
            node=node,
            node_id=node_id,
            session_key=self.key,
            pid=self.process.pid,
            start_ticks=self.process.start_ticks,
            started_at=self.started_at,
            sources=precedence.by_rank(self.sources),
            activity_seq=activity_seq,
            status_epoch=status_epoch,
            occupant_id=self.occupant_id,
            revision=self._revision,
            completed_revision=self._completed_revision,
            **{**values, "activity": values.get("activity") or records.UNKNOWN},
        )
        before = self.record
        if candidate == before:
            return None
        self._revision += 1
        self._activity_seq, self._activity_winner = activity_seq, group
        if candidate.activity != records.UNKNOWN and candidate.liveness != records.ENDED:
            if self._busy and candidate.activity == records.IDLE:
                self._completed_revision = self._revision
            self._busy = candidate.activity in records.BUSY
        self.record = candidate.replace(revision=self._revision, completed_revision=self._completed_revision)
        return before, self.record
