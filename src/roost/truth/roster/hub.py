"""The roster: the one place claims become state, and the changes stream that reports it.

It decides which session a claim is about (by key; by process; or through the process's
ancestors, so nested processes of one session collapse into its root), fences it (ended
sessions, former occupants, a stale ``occupant_id``, per-source sequences), lets the session
apply it by precedence, and numbers what changed. It does no I/O and reads no clock of its
own: the daemon feeds it claims and calls :meth:`Roster.tick` when :meth:`Roster.deadline`
comes, so lease expiry and dropping ended sessions are exact under an injected clock.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from roost.truth.roster import changes, explain, precedence, records
from roost.truth.roster.changes import Change, ChangeLog
from roost.truth.roster.claims import ACTIVITY_ONLY, Claim, ProcessId, check
from roost.truth.roster.provenance import ACTIVITY, ClaimRef
from roost.truth.roster.records import Record
from roost.truth.roster.session import Session
from roost.truth.roster.times import Clock

LINGER = 30.0
"""Seconds an ended session stays in the roster (liveness ``ended``) before it is dropped, so
every client sees how it ended before the row disappears."""
REJECTED_KEPT = 32
"""Refused claims remembered per session for ``explain``."""
TOMBSTONES = 4096
"""Dropped session keys remembered, so a late claim cannot bring a finished session back."""


@dataclass(frozen=True)
class Outcome:
    """What became of one claim. ``reasons`` says why it was refused, or which of its fields a
    higher source kept; ``changes`` are the stream entries it caused (lease expiries included)."""

    session_key: str | None
    accepted: bool
    reasons: tuple[str, ...] = ()
    changes: tuple[Change, ...] = ()


class _Refused(Exception):
    def __init__(self, reason: str, session: Session | None = None) -> None:
        super().__init__(reason)
        self.reason, self.session = reason, session


class Roster:
    """Every session of one node. Every node is the only writer of its own roster."""

    def __init__(
        self,
        node: str,
        node_id: str,
        clock: Clock,
        *,
        status_epoch: int | None = None,
        ring_size: int = changes.RING_SIZE,
        linger: float = LINGER,
        rejected_kept: int = REJECTED_KEPT,
    ) -> None:
        self.node, self.node_id = node, node_id
        self._clock = clock
        self.status_epoch = int(clock() * 1000) if status_epoch is None else status_epoch
        self._linger = linger
        self._rejected_kept = rejected_kept
        self._sessions: dict[str, Session] = {}
        self._where: dict[ProcessId, str] = {}
        self._tombstones: OrderedDict[str, None] = OrderedDict()
        self._log = ChangeLog(self.status_epoch, ring_size)
        self._occupants = 0

    @property
    def head(self) -> int:
        """The seq of the newest change."""
        return self._log.head

    def apply(self, claim: Claim) -> Outcome:
        """Take one claim: accept it (wholly, or with some fields kept by a higher source) or
        refuse it with a reason. Nothing else in roost changes a session."""
        now = self._clock()
        emitted = self._expire(now)
        problem = check(claim)
        if problem:
            return Outcome(None, False, (problem,), tuple(emitted))
        return self._take(claim, now, emitted)

    def overrule(self, claim: Claim, evidence: str, states: frozenset[str] | None = None) -> Outcome:
        """Take ``claim`` over a higher source's needs_attention that ``evidence`` shows is over
        (the rule above precedence, :mod:`roost.truth.roster.attention`), or with ``states``,
        over a higher source's word saying one of those states that a screen rule ends
        (:mod:`roost.truth.roster.overrules`). Refused, changing nothing, unless the claim names
        a live session by key, carries an activity, and such a word stands in its way."""
        now = self._clock()
        emitted = self._expire(now)
        problem = check(claim)
        session = self._sessions.get(claim.session_key or "")
        if problem is None and (session is None or session.ended):
            problem = "overruling needs the key of a live session"
        elif problem is None and claim.activity is None:
            problem = "overruling needs an activity to put in place of the word it ends"
        if problem is not None:
            return Outcome(claim.session_key, False, (problem,), tuple(emitted))
        assert session is not None
        if not session.overrule(claim, now, evidence, states):
            held = records.NEEDS_ATTENTION if states is None else " or ".join(sorted(states))
            reason = f"no source above {claim.source} holds {held}"
            return Outcome(session.key, False, (reason,), tuple(emitted))
        return self._take(claim, now, emitted)

    def tick(self) -> tuple[Change, ...]:
        """Let time pass: expire silent leases and drop sessions that ended long enough ago."""
        return tuple(self._expire(self._clock()))

    def deadline(self) -> float | None:
        """When :meth:`tick` next has something to do, so the daemon sleeps until then, not in a loop."""
        now = self._clock()
        moments = []
        for session in self._sessions.values():
            if session.ending is not None:
                moments.append(session.ending.at + self._linger)
                continue
            for source, lease in precedence.LEASES.items():
                heard = session.heard.get(source)
                if heard is not None and heard + lease > now:
                    moments.append(heard + lease)
        return min(moments, default=None)

    def record(self, key: str) -> Record | None:
        session = self._sessions.get(key)
        return session.record if session else None

    def records(self) -> list[Record]:
        """The roster in the order sessions appeared; ended ones stay until they are dropped."""
        return [session.record for session in self._sessions.values() if session.record is not None]

    def snapshot(self) -> dict[str, Any]:
        return records.snapshot_document(
            self.node, self.node_id, self.status_epoch, self.head, self._clock(), self.records()
        )

    def changes_since(self, since: int | None, status_epoch: int | None = None) -> tuple[Change, ...]:
        """Everything after ``since``; a single ``snapshot`` change when that cannot be replayed
        (no ``since``, one that fell out of the ring, or one from another status epoch). The
        snapshot carries the head seq, so the client asks for what follows it next time."""
        if since is not None and status_epoch in (None, self.status_epoch):
            replay = self._log.since(since)
            if replay is not None:
                return replay
        doc = self.snapshot()
        return (Change(self.head, changes.SNAPSHOT, self._clock(), self.status_epoch, snapshot=doc),)

    def explain(self, key: str) -> dict[str, Any] | None:
        session = self._sessions.get(key)
        return explain.view(session, self._clock()) if session else None

    def holder(self, key: str) -> str | None:
        """The source whose activity the session's record shows, or None."""
        session = self._sessions.get(key)
        if session is None:
            return None
        winner = session.provenance.winner(ACTIVITY, session.counts(self._clock()))
        return winner.ref.source if winner is not None else None

    def find(self, process: ProcessId) -> str | None:
        """The live session a process belongs to, as its root or as a nested process."""
        return self._where.get(process)

    def refuse(self, key: str, claim: Claim, reason: str) -> bool:
        """Record a claim refused before it could be applied (a report whose sender was not
        proven to be the session's agent), so ``explain`` lists it beside the roster's own
        refusals. False when there is no such session to record it on."""
        session = self._sessions.get(key)
        if session is None:
            return False
        session.reject(self._clock(), reason, claim)
        return True

    def _take(self, claim: Claim, now: float, emitted: list[Change]) -> Outcome:
        """Admit a well-formed claim and publish what it changed, after ``emitted``."""
        try:
            session, shadowed = self._admit(claim, now)
        except _Refused as refused:
            if refused.session is not None:
                refused.session.reject(now, refused.reason, claim)
            key = refused.session.key if refused.session else None
            return Outcome(key, False, (refused.reason,), tuple(emitted))
        emitted += self._publish(session, now)
        accepted = not shadowed or len(shadowed) < self._offered(claim)
        return Outcome(session.key, accepted, tuple(shadowed), tuple(emitted))

    def _admit(self, claim: Claim, now: float) -> tuple[Session, list[str]]:
        session, parent = self._address(claim)
        if session is None:
            return self._start(claim, now, parent)
        if session.ended:
            raise _Refused(f"session {session.key} has ended", session)
        if claim.occupant_id is not None and claim.occupant_id != session.occupant_id:
            raise _Refused(
                f"occupant changed: the claim names occupant {claim.occupant_id}, "
                f"the session's is {session.occupant_id}",
                session,
            )
        process = claim.process
        if process is not None and process != session.process and process not in session.members:
            if process in session.previous:
                raise _Refused(f"process {process.pid} is a former occupant of this session", session)
            if claim.ended is not None:
                raise _Refused(f"process {process.pid} is not this session's occupant", session)
            if session.process in claim.ancestors or session.members.intersection(claim.ancestors):
                self._nest(session, process)
            else:
                self._replace(session, process, claim)
        problem = session.sequence(claim, now)
        if problem:
            raise _Refused(problem, session)
        if claim.ended is None:
            return session, session.offer(claim, now)
        if process is not None and process in session.members:
            session.members.discard(process)
            self._where.pop(process, None)
        else:
            self._end(session, claim)
        return session, []

    def _address(self, claim: Claim) -> tuple[Session | None, Session | None]:
        """(the session the claim is about, None), or (None, the session a new one descends
        from, if any) when the claim starts a session."""
        if claim.session_key is not None:
            session = self._sessions.get(claim.session_key)
            if session is not None:
                return session, None
            if claim.session_key in self._tombstones:
                raise _Refused(f"session {claim.session_key} has ended")
            if claim.process is None or claim.session_key != self._key(claim.process):
                raise _Refused(f"unknown session {claim.session_key}")
            self._may_start(claim)
            return None, None
        process = claim.process
        assert process is not None  # check() demands a key or a process
        key = self._where.get(process) or self._key(process)
        if key in self._sessions:
            return self._sessions[key], None
        self._may_start(claim)
        for ancestor in claim.ancestors:
            root = self._sessions.get(self._where.get(ancestor, ""))
            if root is None:
                continue
            if self._separate(root, claim):
                return None, root
            self._nest(root, process)
            return root, None
        return None, None

    def _may_start(self, claim: Claim) -> None:
        """Refuse to start a session from a claim that can only be about the past."""
        assert claim.process is not None
        key = self._key(claim.process)
        if key in self._tombstones:
            raise _Refused(f"session {key} has ended")
        if claim.ended is not None:
            raise _Refused(f"unknown session {key}: nothing to end")

    def _nest(self, root: Session, process: ProcessId) -> None:
        """A process inside a session's tree speaks for that session, not as a new one."""
        root.members.add(process)
        self._where[process] = root.key

    def _replace(self, session: Session, process: ProcessId, claim: Claim) -> None:
        self._forget_processes(session)
        self._occupants += 1
        session.replace_occupant(process, self._occupants, claim)
        self._where[process] = session.key

    def _forget_processes(self, session: Session) -> None:
        self._where.pop(session.process, None)
        for member in session.members:
            self._where.pop(member, None)

    @staticmethod
    def _separate(root: Session, claim: Claim) -> bool:
        """A harness started under another session is its own session (a spawned child) when a
        launcher registers it or it names a different harness session id than its ancestor."""
        if claim.source == precedence.LAUNCHER:
            return True
        mine = claim.fields.get("session_id")
        theirs = root.record.session_id if root.record else None
        return mine is not None and theirs is not None and mine != theirs

    def _start(self, claim: Claim, now: float, parent: Session | None) -> tuple[Session, list[str]]:
        process = claim.process
        assert process is not None
        self._occupants += 1
        started_at = claim.started_at if claim.started_at is not None else claim.received_at
        key = self._key(process)
        session = Session(key, process, self._occupants, started_at, ClaimRef.of(claim), self._rejected_kept)
        session.sequence(claim, now)  # the first claim of a session is always in order
        self._sessions[key] = session
        self._where[process] = key
        extra = {"parent_session_key": parent.key} if parent is not None else None
        return session, session.offer(claim, now, extra)

    def _end(self, session: Session, claim: Claim) -> None:
        assert claim.ended is not None
        session.end(claim.ended, claim)
        self._forget_processes(session)

    def _key(self, process: ProcessId) -> str:
        return records.session_key(self.node_id, process.pid, process.start_ticks)

    @staticmethod
    def _offered(claim: Claim) -> int:
        """How many values a claim offers: its fields, the activity-only ones counted as the
        one activity group they belong to."""
        return len(set(claim.fields) - ACTIVITY_ONLY) + (claim.activity is not None)

    def _publish(self, session: Session, now: float) -> list[Change]:
        published = session.publish(self.node, self.node_id, self.status_epoch, now)
        if published is None:
            return []
        before, after = published
        return [self._log.append(name, now, after) for name in changes.transitions(before, after)]

    def _expire(self, now: float) -> list[Change]:
        emitted: list[Change] = []
        for key, session in list(self._sessions.items()):
            if session.ending is not None:
                if now >= session.ending.at + self._linger:
                    del self._sessions[key]
                    self._tombstones[key] = None
                    while len(self._tombstones) > TOMBSTONES:
                        self._tombstones.popitem(last=False)
            elif any(source in session.heard for source in precedence.LEASES):
                emitted += self._publish(session, now)
        return emitted
